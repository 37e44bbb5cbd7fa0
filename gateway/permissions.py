"""What a credential may use, decided in one place for the router, the proxy, the model list and the
usage API: every permission check (a 403) is a function here, the callers only ask.

A credential's ``models`` (what it may ask for: ``auto``, backend names, backend model ids) and its
``backends`` (where the router may send it) resolve, against the configured backends, to one
:class:`Access`: the set of backends that may serve its requests, and whether it may ask for ``auto``
or name a backend itself. The routing decision then keeps every candidate (the first choice, the
fallbacks, the spill-over) inside that set, so what a request asks for never widens it.

A leaf beside ``gateway.errors``: routing, proxy, api and auth all read it, so it imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass
from typing import Protocol, TypeVar

from gateway.errors import PermissionDenied

__all__ = [
    "AUTO",
    "UNRESTRICTED",
    "Access",
    "allows",
    "check_auto",
    "check_named",
    "check_route_choice",
    "model_not_allowed",
    "resolve_access",
    "usage_scope",
    "within",
]

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


def check_route_choice(may_override: bool, *, by_model: bool) -> None:
    """The 403 when a credential without ``route_override`` chooses a route (the header, an alias);
    ``model`` naming a backend is not a route choice, its permission is :func:`check_named`'s."""
    if not may_override and not by_model:
        raise PermissionDenied("This credential may not choose a route explicitly.", code="route_not_allowed")


def check_named(
    may_name: bool, allowed: Set[str] | None, backend: str, choice: str, *, param: str | None = "model"
) -> None:
    """The 403 when a credential chooses ``backend`` itself (as ``choice``) and may not."""
    if not (may_name and allows(allowed, backend)):
        raise model_not_allowed(choice, param=param)


def check_auto(may_auto: bool, choice: str) -> None:
    """The 403 when a credential asks for automatic routing and may not."""
    if not may_auto:
        raise model_not_allowed(choice)


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_B = TypeVar("_B", bound=_Named)


def within(allowed: Set[str] | None, candidates: Sequence[_B]) -> list[_B]:
    """The candidates a credential may use, in order; the 403 when none is left."""
    if allowed is None:
        return list(candidates)
    kept = [b for b in candidates if b.name in allowed]
    if not kept:
        raise PermissionDenied("This credential may not use any backend that can serve this request.")
    return kept


def usage_scope(
    admin: bool, own: tuple[str, str], key: str | None, kind: str | None
) -> tuple[str | None, str | None]:
    """Whose usage a caller may read, as (key, kind): an admin's query as asked (None: everyone's); any
    other caller's own (``own``, its name and kind), and the 403 when it asks for someone else's."""
    if admin:
        return key, kind
    name, own_kind = own
    if (key is not None and key != name) or (kind is not None and kind != own_kind):
        raise PermissionDenied("Only an admin may read another key's usage.", code="usage_not_allowed")
    return name, own_kind
