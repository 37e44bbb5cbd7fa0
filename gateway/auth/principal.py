"""The authenticated caller, as every later stage (routing, limits, telemetry) sees it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Principal"]


@dataclass(frozen=True, slots=True)
class Principal:
    # A configured key name or a JWT subject; never a credential.
    name: str
    kind: Literal["key", "jwt", "anonymous"]
    # Model ids or backend names this principal may ask for (``auto`` included); None means any.
    models: frozenset[str] | None = None

    def may_use(self, *names: str) -> bool:
        """True when any of ``names`` (a backend's name and model id, or ``auto``) is allowed."""
        return self.models is None or any(n in self.models for n in names)
