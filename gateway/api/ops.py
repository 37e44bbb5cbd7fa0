"""Operations: liveness, readiness, Prometheus metrics. None of them takes or shows a secret."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.responses import Response

from gateway.api.state import GatewayState
from gateway.edge.state import OPERATOR_SCOPE_KEY
from gateway.errors import AuthenticationFailed, NotFound

__all__ = ["router"]

router = APIRouter()


@router.get("/healthz")
async def healthz(request: Request) -> Response:
    state: GatewayState = request.app.state.gateway
    return state.json({"status": "ok"})


@router.get("/readyz")
async def readyz(request: Request) -> Response:
    """Ready when at least one backend is usable, as the background health probes and the circuit
    breakers see it; each backend's state is listed (up, down, or open: its breaker is open)."""
    state: GatewayState = request.app.state.gateway
    results: dict[str, str] = {}
    for name, backend in state.pool.states.items():
        if not backend.healthy:
            results[name] = "down"
        elif backend.breaker.state == "open":
            results[name] = "open"
        else:
            results[name] = "up"
    ready = any(v == "up" for v in results.values())
    body = {"status": "ready" if ready else "unavailable", "backends": results}
    return state.json(body, 200 if ready else 503)


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    """Prometheus metrics: always on the operator listener; on the main one only behind
    ``telemetry.metrics_token`` (and never when ``telemetry.metrics_on_main`` is off). The scrape names
    every key and backend with its traffic: on the listener every client reaches, it is no one's without
    the credential, so with no token set it is not served there at all."""
    state: GatewayState = request.app.state.gateway
    if not request.scope.get(OPERATOR_SCOPE_KEY):
        telemetry = state.settings.telemetry
        token = telemetry.metrics_token
        if not telemetry.metrics_on_main or token is None:
            raise NotFound("Invalid URL (GET /metrics)", code="unknown_url")
        sent = request.headers.get("authorization", "")
        expected = "Bearer " + token.get_secret_value()
        if not hmac.compare_digest(sent.encode(), expected.encode()):
            raise AuthenticationFailed("The metrics endpoint needs its bearer token.", reason="invalid")
    return Response(state.exposition(), media_type=CONTENT_TYPE_LATEST)
