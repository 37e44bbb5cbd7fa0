"""The ``limits:`` and ``state:`` sections."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["LimitSettings", "StateSettings"]


class LimitSettings(BaseModel):
    """Per principal; None means no limit. Keys and tiers override these one by one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests_per_minute: int | None = Field(None, ge=1)
    tokens_per_minute: int | None = Field(None, ge=1)  # prompt + completion, from usage, streams included
    concurrent_requests: int | None = Field(None, ge=1)
    daily_tokens: int | None = Field(None, ge=1)  # per UTC day

    def merged(self, override: LimitSettings | None) -> LimitSettings:
        if override is None:
            return self
        return LimitSettings.model_validate({**self.model_dump(), **override.model_dump(exclude_none=True)})

    @property
    def any(self) -> bool:
        # Read field by field: model_dump() built a dict on every limited request (a tenth of the
        # limiter's time on a rejected request, py-spy, issue 16).
        return any(getattr(self, name) is not None for name in type(self).model_fields)


class StateSettings(BaseModel):
    """Where limits and shared counts live: this process's memory, or Redis for several workers/replicas."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # redis://[:password@]host:6379/0; unset: in memory, this process only. A secret (it may hold the
    # password): masked wherever settings are printed (issue 16).
    redis_url: SecretStr | None = None
    key_prefix: str = "gateway"
    # Every Redis call is bounded by this (seconds), so a slow or dead Redis never hangs a request.
    timeout: float = Field(0.25, gt=0, le=10)
    # Redis unreachable: let requests through without limits ("open") or refuse them with 503 ("closed").
    on_unavailable: Literal["open", "closed"] = "open"
    # Concurrency slots are leases: a crashed worker's slots free themselves after this many seconds.
    lease_ttl: float = Field(30.0, gt=0)
