"""What a credential may use, decided in one place for the router, the proxy and the model list.

A credential's ``models`` (what it may ask for: ``auto``, backend names, backend model ids) and its
``backends`` (where the router may send it) resolve, against the configured backends, to one
:class:`Access`: the set of backends that may serve its requests, and whether it may ask for ``auto``
or name a backend itself. The routing decision then keeps every candidate (the first choice, the
fallbacks, the spill-over) inside that set, so what a request asks for never widens it.

A leaf beside ``gateway.errors``: routing, proxy, api and auth all read it, so it imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass

from gateway.errors import PermissionDenied

__all__ = ["AUTO", "UNRESTRICTED", "Access", "allows", "model_not_allowed", "resolve_access"]

AUTO = "auto"


@dataclass(frozen=True, slots=True)
class Access:
    """A credential's permissions, resolved against the configured backends."""

    # Names of the backends that may serve its requests, however chosen (None: any).
    backends: frozenset[str] | None = None
    # Whether it may ask for ``auto`` (the router then chooses among ``backends``).
    auto: bool = True
    # Whether it may choose a backend itself (model id, backend name, alias, x-gateway-route) among
    # ``backends``; false for ``models: [auto]``, which allows automatic routing only.
    named: bool = True

    def serves(self, backend: str) -> bool:
        """True when ``backend`` may serve this credential's requests."""
        return allows(self.backends, backend)

    def may_name(self, backend: str) -> bool:
        """True when this credential may choose ``backend`` itself."""
        return self.named and self.serves(backend)

    @property
    def empty(self) -> bool:
        """True when no backend may serve it: every request is refused."""
        return self.backends is not None and not self.backends


UNRESTRICTED = Access()


def allows(allowed: Set[str] | None, name: str) -> bool:
    """True when ``allowed`` is unrestricted (None) or holds ``name``."""
    return allowed is None or name in allowed


def resolve_access(
    models: Set[str] | None, backends: Set[str] | None, catalog: Iterable[tuple[str, str]]
) -> Access:
    """The :class:`Access` of a credential's ``models`` and ``backends`` over ``catalog`` (each configured
    backend's name and model id).

    ``models`` names backends by name or model id: those backends, and ``auto`` among them when it lists
    ``auto`` too. ``models: [auto]`` alone names no backend: automatic routing among every backend, and no
    choosing one. An entry that names no configured backend grants nothing (a stale or mistyped entry
    closes access rather than opening it). ``backends`` narrows the result in every case.
    """
    if models is None and backends is None:
        return UNRESTRICTED
    catalog = tuple(catalog)
    if models is None or models == {AUTO}:
        serving = None
        named = models is None
    else:
        serving = frozenset(name for name, model in catalog if name in models or model in models)
        named = True
    if backends is not None:
        routable = frozenset(name for name, _ in catalog if name in backends)
        serving = routable if serving is None else serving & routable
    return Access(backends=serving, auto=models is None or AUTO in models, named=named)


def model_not_allowed(choice: str, *, param: str | None = "model") -> PermissionDenied:
    """The 403 for a model, backend or alias (or the backends behind it) this credential may not use."""
    return PermissionDenied(f"This credential may not use the model `{choice[:200]}`.", param=param)
