"""Operations: liveness, readiness, Prometheus metrics. None of them takes or shows a secret."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.responses import Response

from gateway.api.state import GatewayState
from gateway.upstream import UpstreamError

__all__ = ["router"]

router = APIRouter()

_PROBE_TIMEOUT = 2.0


@router.get("/healthz")
async def healthz(request: Request) -> Response:
    state: GatewayState = request.app.state.gateway
    return state.json({"status": "ok"})


@router.get("/readyz")
async def readyz(request: Request) -> Response:
    """Ready when at least one backend answers its ``/health``; each backend's state is listed."""
    state: GatewayState = request.app.state.gateway

    async def probe(name: str) -> tuple[str, str]:
        backend = state.settings.backend(name)
        try:
            status, _ = await state.upstream.get(backend, "/health", within=_PROBE_TIMEOUT)
        except UpstreamError:
            return name, "unreachable"
        return name, "up" if status == 200 else "down"

    results = dict(await asyncio.gather(*(probe(b.name) for b in state.settings.backends)))
    ready = any(v == "up" for v in results.values())
    return state.json(
        {"status": "ready" if ready else "unavailable", "backends": results}, 200 if ready else 503
    )


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    state: GatewayState = request.app.state.gateway
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
