"""What a credential may use, decided in one place for the router, the proxy and the model list.

A leaf beside ``gateway.errors``: routing, proxy, api and auth all read it, so it imports none of them.
"""

from __future__ import annotations

from collections.abc import Set

from gateway.errors import PermissionDenied

__all__ = ["allows", "model_not_allowed"]


def allows(allowed: Set[str] | None, *names: str) -> bool:
    """True when ``allowed`` is unrestricted (None) or holds any of ``names``."""
    return allowed is None or any(name in allowed for name in names)


def model_not_allowed(model: str) -> PermissionDenied:
    """The 403 for a model (or the backends behind it) this credential may not use."""
    return PermissionDenied(f"This credential may not use the model `{model[:200]}`.", param="model")
