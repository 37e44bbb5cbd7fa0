"""The ASGI entry point, and the hot path around FastAPI's router.

``POST /v1/chat/completions``, ``/v1/completions``, ``/v1/responses`` and ``/v1/messages`` are dispatched
straight from ASGI to the proxy:
FastAPI's routing, dependency solving and middleware stack cost a measurable share of every request
(profiled with py-spy; docs/performance.md) and give these routes nothing. Every other path (models,
ops, 404s) goes through the FastAPI app as usual. Both sit inside the request-context middleware, so
request ids, the request log, metrics and the 500 envelope are the same everywhere.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from gateway.api.errors import error_response, note_error
from gateway.api.openai import proxy
from gateway.api.state import GatewayState
from gateway.edge.state import EdgeState
from gateway.errors import GatewayError, MethodNotAllowed
from gateway.middleware import RequestContextMiddleware
from gateway.proxy.dialects import PATHS, Endpoint
from gateway.upstream.base import pool_size

__all__ = ["GatewayApp"]

_HOT: dict[str, Endpoint] = {path: endpoint for endpoint, path in PATHS.items()}


class GatewayApp:
    def __init__(self, api: FastAPI, state: GatewayState) -> None:
        self.api = api
        self._gateway = state
        self._entry = RequestContextMiddleware(self._dispatch, state.metrics, finishers=state.finishers)
        # What the server's connection protocol (gateway.edge.protocol) finds behind uvicorn's wrappers.
        settings = state.settings
        cap = settings.edge.connection_cap(pool_size(settings.backends))
        self.edge = EdgeState(settings.edge, cap, state.metrics, self)

    @property
    def state(self) -> Any:
        return self.api.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._entry(scope, receive, send)

    async def aclose(self) -> None:
        """Close the clients the app holds, for an app whose lifespan never ran (its shutdown does this)."""
        await self._gateway.aclose()

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = _HOT.get(scope["path"]) if scope["type"] == "http" else None
        if endpoint is None:
            await self.api(scope, receive, send)
            return
        try:
            if scope["method"] != "POST":
                raise MethodNotAllowed(f"Method not allowed ({scope['method']} {scope['path']}).")
            response = await proxy(Request(scope, receive), endpoint, self._gateway)
        except GatewayError as exc:
            note_error(scope, exc)
            response = error_response(exc, anthropic=endpoint == "messages")
        await response(scope, receive, send)
