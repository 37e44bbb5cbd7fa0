"""The ``limits:`` and ``state:`` sections."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_RETRY_HINT_MAX_SECONDS",
    "LimitSettings",
    "LimitsSection",
    "StateSettings",
]

# Completion tokens reserved per sequence for a request that sets no max_tokens, unless
# limits.default_max_tokens says otherwise.
DEFAULT_MAX_TOKENS = 4096
# Seconds: the longest wait a 429 tells clients to sit out themselves, unless limits.retry_hint_max_seconds
# says otherwise (LimitsSection).
DEFAULT_RETRY_HINT_MAX_SECONDS = 5.0
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
        # Its own class: the limits: section's merged with a key's keeps the section's own fields.
        return type(self).model_validate({**self.model_dump(), **override.model_dump(exclude_none=True)})

    @property
    def any(self) -> bool:
        # Read field by field: model_dump() built a dict on every limited request (a tenth of the
        # limiter's time on a rejected request, py-spy).
        return any(getattr(self, name) is not None for name in _LIMITS)

    @property
    def reserved_max_tokens(self) -> int:
        return self.default_max_tokens if self.default_max_tokens is not None else DEFAULT_MAX_TOKENS


class LimitsSection(LimitSettings):
    """The ``limits:`` section: the limits every principal starts from (None: no limit; its tier's and
    then its key's override them one by one), and what a 429 advises about retrying, which is the
    gateway's alone: tiers and keys have no such field."""

    # Seconds. A 429 whose Retry-After is longer than this says `x-should-retry: false`, shorter says true.
    # OpenAI's and Anthropic's SDKs obey that header; without it they sleep for Retry-After (up to two
    # minutes) and retry, twice by default, so a limit that resets in a minute hangs the caller for two
    # without a word. With false they raise RateLimitError at once and the application decides (a bot says
    # "slow down"); a short wait is still retried by the SDK. 0: never advise a retry.
    retry_hint_max_seconds: float = Field(DEFAULT_RETRY_HINT_MAX_SECONDS, ge=0, le=3600)


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
