"""The authenticated caller, as every later stage (routing, limits, telemetry) sees it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from gateway.limits.settings import LimitSettings
from gateway.permissions import Access, resolve_access

__all__ = ["Principal"]


@dataclass(frozen=True, slots=True)
class Principal:
    # A configured key name or a JWT subject; never a credential.
    name: str
    kind: Literal["key", "jwt", "anonymous"]
    # Model ids or backend names this principal may ask for (``auto`` included); None means any. They
    # also bound where ``auto`` goes: see permissions.resolve_access.
    models: frozenset[str] | None = None
    # Backend names its requests may be sent to, however chosen (None: any).
    backends: frozenset[str] | None = None
    # Whether it may choose a backend itself (x-gateway-route, an alias); naming a model id always works.
    may_override: bool = True
    # A speed tier (routing.speed_tiers) applied to its diffusion requests unless the request asks another.
    speed_tier: str | None = None
    # Thinking control (auth.tiers / key records): a default, whether requests may override it, and
    # whether reasoning text is removed from what the client receives.
    thinking: bool | None = None
    thinking_override: bool = True
    strip_reasoning: bool = False
    # Stream pacing: None leaves it to the pacing: section's default.
    pacing: bool | None = None
    # Its own difficulty threshold (routing.scorer): lower for users who want quality, higher for bots
    # that want speed; None leaves routing.scorer.threshold (or the model's) in force.
    route_threshold: float | None = None
    # The auth tier it belongs to (auth.tiers), if any.
    tier: str | None = None
    # Its own limits (key record over tier); the limits: section fills in the rest.
    limits: LimitSettings | None = None
    # The admin scope (a key's or its tier's): reads everybody's usage.
    admin: bool = False

    def access(self, catalog: Iterable[tuple[str, str]]) -> Access:
        """What it may use among ``catalog`` (each configured backend's name and model id)."""
        return resolve_access(self.models, self.backends, catalog)
