"""The OpenAI-compatible surface: chat completions, completions, responses and Anthropic-style messages
(the hot path, see fastpath.py), models, and the routing explanation."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from gateway.api.state import GatewayState
from gateway.middleware import record_of
from gateway.proxy.dialects import Endpoint
from gateway.routing import AUTO

__all__ = ["proxy", "router"]

router = APIRouter()


async def proxy(request: Request, endpoint: Endpoint, state: GatewayState) -> Response:
    """POST to a proxied API (dialects.PATHS); dispatched by gateway.api.fastpath, not the router."""
    record = record_of(request.scope)
    record.api = endpoint  # a ledger row and a trace for every proxied call, failed ones too
    if state.tracer is not None:
        record.trace = state.tracer.start(record, request.headers, endpoint)
    principal = await state.auth.authenticate(request.headers)
    record.principal = principal.name
    record.principal_kind = principal.kind
    record.tier = principal.tier
    record.principal_label = state.metrics.principal_label(principal.kind, principal.name, principal.tier)
    # Limits are applied inside, once the body is read and its permissions checked.
    return await state.proxy.handle(request, endpoint, principal, record)


@router.get("/v1/models")
async def models(request: Request) -> Response:
    state: GatewayState = request.app.state.gateway
    principal = await state.auth.authenticate(request.headers)
    record = record_of(request.scope)
    record.principal = principal.name
    await state.count_request(principal, record)
    created = state.started_at
    data = []
    # The same resolution the routing decision gets: what a request from this key could be served by.
    access = principal.access((b.name, b.model) for b in state.settings.backends)
    if access.auto and not access.empty:
        data.append({"id": AUTO, "object": "model", "created": created, "owned_by": "gateway"})
    for backend in state.settings.backends:
        if access.may_name(backend.name):
            data.append(
                {"id": backend.model, "object": "model", "created": created, "owned_by": backend.name}
            )
    return state.json({"object": "list", "data": data})


@router.post("/v1/gateway/route")
async def explain_route(request: Request) -> Response:
    """The routing decision for a request body, without sending it anywhere."""
    state: GatewayState = request.app.state.gateway
    principal = await state.auth.authenticate(request.headers)
    record = record_of(request.scope)
    record.principal = principal.name
    explained = await state.proxy.explain(request, principal)
    await state.count_request(principal, record)  # after the permission check in explain, as for a request
    return state.json(explained)
