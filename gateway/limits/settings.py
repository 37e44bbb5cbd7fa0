"""The ``limits:`` and ``state:`` sections."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["DEFAULT_MAX_TOKENS", "LimitSettings", "StateSettings"]

# Completion tokens reserved per sequence for a request that sets no max_tokens, unless
# limits.default_max_tokens says otherwise.
DEFAULT_MAX_TOKENS = 4096
# The fields that limit anything: default_max_tokens only sizes the token reservations they make.
_LIMITS = ("requests_per_minute", "tokens_per_minute", "concurrent_requests", "daily_tokens")


class LimitSettings(BaseModel):
    """Per principal; None means no limit. Keys and tiers override these one by one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests_per_minute: int | None = Field(None, ge=1)
    # Prompt + completion. Both token budgets are reserved at admission (the prompt's estimate plus
    # max_tokens for every sequence asked for) and settled from usage when the request ends
    # (gateway/limits/tokens.py).
    tokens_per_minute: int | None = Field(None, ge=1)
    concurrent_requests: int | None = Field(None, ge=1)
    daily_tokens: int | None = Field(None, ge=1)  # per UTC day
    # The max_tokens reserved for a request that sets none; null: DEFAULT_MAX_TOKENS. A backend that is
    # not told a limit may write up to its context length, so a small value here lets such requests
    # overshoot the budgets by what they write beyond it.
    default_max_tokens: int | None = Field(None, ge=1)

    def merged(self, override: LimitSettings | None) -> LimitSettings:
        if override is None:
            return self
        return LimitSettings.model_validate({**self.model_dump(), **override.model_dump(exclude_none=True)})

    @property
    def any(self) -> bool:
        # Read field by field: model_dump() built a dict on every limited request (a tenth of the
        # limiter's time on a rejected request, py-spy).
        return any(getattr(self, name) is not None for name in _LIMITS)

    @property
    def reserved_max_tokens(self) -> int:
        return self.default_max_tokens if self.default_max_tokens is not None else DEFAULT_MAX_TOKENS


class StateSettings(BaseModel):
    """Where limits and shared counts live: this process's memory, or Redis for several workers/replicas."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # redis://[:password@]host:6379/0; unset: in memory, this process only. A secret (it may hold the
    # password): masked wherever settings are printed.
    redis_url: SecretStr | None = None
    key_prefix: str = "gateway"
    # Every Redis call is bounded by this (seconds), so a slow or dead Redis never hangs a request.
    timeout: float = Field(0.25, gt=0, le=10)
    # Redis unreachable: let requests through without limits ("open") or refuse them with 503 ("closed").
    on_unavailable: Literal["open", "closed"] = "open"
    # Concurrency slots are leases: a crashed worker's slots free themselves after this many seconds.
    lease_ttl: float = Field(30.0, gt=0)
