"""Turning a key record or a token's claims, and the tier they name, into a :class:`Principal`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from gateway.auth.principal import Principal
from gateway.auth.settings import TierPolicy
from gateway.errors import PermissionDenied
from gateway.limits.settings import LimitSettings

__all__ = ["build_principal"]

_OPEN = TierPolicy()


def build_principal(
    name: str,
    kind: Literal["key", "jwt", "anonymous"],
    tier: str | None,
    tiers: Mapping[str, TierPolicy],
    *,
    models: list[str] | None = None,
    backends: list[str] | None = None,
    route_override: bool | None = None,
    speed_tier: str | None = None,
    limits: LimitSettings | None = None,
    thinking: bool | None = None,
    thinking_override: bool | None = None,
    strip_reasoning: bool | None = None,
    pacing: bool | None = None,
    route_threshold: float | None = None,
    admin: bool | None = None,
) -> Principal:
    """The principal's own settings where given, else its tier's. An unknown tier fails closed."""
    policy = _OPEN
    if tier is not None:
        found = tiers.get(tier)
        if found is None:
            raise PermissionDenied(
                "This credential names a tier the gateway does not know.", code="unknown_tier"
            )
        policy = found
    models = models if models is not None else policy.models
    backends = backends if backends is not None else policy.backends
    return Principal(
        name=name,
        kind=kind,
        models=frozenset(models) if models is not None else None,
        backends=frozenset(backends) if backends is not None else None,
        may_override=route_override if route_override is not None else policy.route_override,
        speed_tier=speed_tier or policy.speed_tier,
        tier=tier,
        limits=policy.limits.merged(limits) if policy.limits is not None else limits,
        thinking=thinking if thinking is not None else policy.thinking,
        thinking_override=thinking_override if thinking_override is not None else policy.thinking_override,
        strip_reasoning=strip_reasoning if strip_reasoning is not None else policy.strip_reasoning,
        pacing=pacing if pacing is not None else policy.pacing,
        route_threshold=route_threshold if route_threshold is not None else policy.route_threshold,
        admin=admin if admin is not None else policy.admin,
    )
