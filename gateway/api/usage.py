"""GET /v1/gateway/usage: the usage ledger, summed by day, key, backend, model, API or tier.

A principal with the admin scope (auth.tiers.<tier>.admin, or a key's own ``admin``) may read everyone's
usage and filter by ``key``; any other principal reads only its own rows (its key name or JWT subject,
and its kind, so a key never sees a JWT subject's usage of the same name).
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from sqlalchemy.exc import SQLAlchemyError
from starlette.responses import Response

from gateway.api.state import GatewayState
from gateway.errors import GatewayError, InvalidRequest, NotFound, PermissionDenied
from gateway.middleware import record_of
from gateway.usage.query import GROUPS, UsageQuery, parse_since

__all__ = ["router"]

log = logging.getLogger("gateway.usage")
router = APIRouter()

_PARAMETERS = frozenset({"since", "by", "key", "limit"})


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
    params = request.query_params
    unknown = sorted(set(params) - _PARAMETERS)
    if unknown:
        raise InvalidRequest(f"Unknown parameter `{unknown[0][:40]}`.", code="invalid_parameter")
    try:
        since = parse_since(params.get("since", "7d"))
    except ValueError as exc:
        raise InvalidRequest(str(exc), code="invalid_parameter", param="since") from None
    by = params.get("by", "key")
    if by not in GROUPS:
        raise InvalidRequest(f"by: one of {', '.join(GROUPS)}.", code="invalid_parameter", param="by")
    limit_text = params.get("limit", "1000")
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= 10_000:
        raise InvalidRequest("limit: an integer from 1 to 10000.", code="invalid_parameter", param="limit")
    key = params.get("key")
    if principal.admin:
        query = UsageQuery(since=since, by=by, principal=key, limit=int(limit_text))  # type: ignore[arg-type]
    else:
        if key is not None and key != principal.name:
            raise PermissionDenied("Only an admin may read another key's usage.", code="usage_not_allowed")
        query = UsageQuery(
            since=since,
            by=by,  # type: ignore[arg-type]
            principal=principal.name,
            principal_kind=principal.kind,
            limit=int(limit_text),
        )
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
