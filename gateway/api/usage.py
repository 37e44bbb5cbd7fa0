"""GET /v1/gateway/usage: the usage ledger, summed by day, key, backend, model, API or tier.

A principal with the admin scope (auth.tiers.<tier>.admin, or a key's own ``admin``) may read everyone's
usage and filter by ``key`` and ``kind`` (key, jwt, anonymous); any other principal reads only its own rows
(its key name or JWT subject, and its kind, so a key never sees a JWT subject's usage of the same name).
Grouped by key, an API key and a JWT subject of the same name are two rows, told apart by ``kind``.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from sqlalchemy.exc import SQLAlchemyError
from starlette.datastructures import QueryParams
from starlette.responses import Response

from gateway.api.errors import shown_path
from gateway.api.state import GatewayState
from gateway.auth import Principal
from gateway.errors import GatewayError, InvalidRequest, NotFound
from gateway.middleware import record_of
from gateway.permissions import usage_scope
from gateway.usage.query import GROUPS, KINDS, UsageQuery, parse_since

__all__ = ["router"]

log = logging.getLogger("gateway.usage")
router = APIRouter()

_PARAMETERS = frozenset({"since", "by", "key", "kind", "limit"})
_MAX_LIMIT = 10_000
# A key name or JWT subject as the ledger stores it (records.py cuts principals to 256 characters).
_MAX_KEY = 256


class UsageUnavailable(GatewayError):
    status = 503
    type = "server_error"
    code = "usage_store_unavailable"


@router.get("/v1/gateway/usage")
async def usage(request: Request) -> Response:
    state: GatewayState = request.app.state.gateway
    principal = await state.auth.authenticate(request.headers)
    record = record_of(request.scope)
    record.principal = principal.name
    if state.ledger is None:
        raise NotFound("The usage ledger is off (usage.enabled: false).", code="usage_disabled")
    since, by, query = _query(request.query_params, principal)
    await state.count_request(principal, record)  # after the checks of what it may read, as for a request
    try:
        rows = await state.ledger.summarize(query)
    except SQLAlchemyError as exc:
        log.warning("usage ledger: query failed (%s)", type(exc).__name__)
        raise UsageUnavailable("The usage ledger cannot be read right now; retry shortly.") from None
    return state.json(
        {
            "object": "gateway.usage",
            "since": round(since, 3),
            "by": by,
            "scope": "all" if principal.admin else "own",
            "data": rows,
        }
    )


def _query(params: QueryParams, principal: Principal) -> tuple[float, str, UsageQuery]:
    """The query string, parsed strictly: every parameter once at most, integers in ASCII digits within
    their range, names from their fixed sets. Anything else is a 400 naming the parameter, never a 500
    (``int("²")`` raises although ``"²".isdigit()`` is true) and never a query the store refuses (a NUL)."""
    unknown = sorted(set(params) - _PARAMETERS)
    if unknown:
        raise InvalidRequest(f"Unknown parameter `{shown_path(unknown[0], 40)}`.", code="invalid_parameter")
    for name in sorted(set(params)):
        if len(params.getlist(name)) > 1:
            raise InvalidRequest(f"{name}: give it once.", code="invalid_parameter", param=name)
    try:
        since = parse_since(params.get("since", "7d"))
    except ValueError as exc:
        raise InvalidRequest(str(exc), code="invalid_parameter", param="since") from None
    by = params.get("by", "key")
    if by not in GROUPS:
        raise InvalidRequest(f"by: one of {', '.join(GROUPS)}.", code="invalid_parameter", param="by")
    limit = _integer(params.get("limit", "1000"), 1, _MAX_LIMIT)
    if limit is None:
        message = f"limit: an integer from 1 to {_MAX_LIMIT}."
        raise InvalidRequest(message, code="invalid_parameter", param="limit")
    key = params.get("key")
    if key is not None and not (0 < len(key) <= _MAX_KEY and key.isprintable()):
        message = f"key: a key name or JWT subject, 1 to {_MAX_KEY} printable characters."
        raise InvalidRequest(message, code="invalid_parameter", param="key")
    kind = params.get("kind")
    if kind is not None and kind not in KINDS:
        raise InvalidRequest(f"kind: one of {', '.join(KINDS)}.", code="invalid_parameter", param="kind")
    key, kind = usage_scope(principal.admin, (principal.name, principal.kind), key, kind)
    query = UsageQuery(since=since, by=by, principal=key, principal_kind=kind, limit=limit)  # type: ignore[arg-type]
    return since, by, query


def _integer(text: str, low: int, high: int) -> int | None:
    """``text`` as an integer from ``low`` to ``high``: ASCII digits only (no sign, space, underscore or
    other script's digits, all of which ``int`` takes), none past the width of ``high``."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(high)):
        return None
    value = int(text)
    return value if low <= value <= high else None
