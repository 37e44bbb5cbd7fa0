"""The circuit breakers' configuration (``routing.breaker``, gathered by the ``routing:`` section)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BreakerSettings"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BreakerSettings(_Section):
    failures: int = Field(3, ge=1)  # consecutive failures that open the breaker
    cooldown: float = Field(30.0, gt=0)  # seconds open before one probe request is let through
