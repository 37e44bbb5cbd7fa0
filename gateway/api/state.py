"""What the routes share: built once by the app factory, handed to requests through ``app.state``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from starlette.responses import Response

from gateway.auth import Authenticator
from gateway.auth.keys import KeyStore
from gateway.config import Settings
from gateway.limits.limiter import Limiter
from gateway.limits.store import StateStore
from gateway.proxy.handler import ProxyHandler
from gateway.routing.state import BackendPool
from gateway.telemetry.metrics import Metrics
from gateway.upstream import UpstreamClient

__all__ = ["GatewayState"]


@dataclass(slots=True)
class GatewayState:
    settings: Settings
    auth: Authenticator
    keys: KeyStore | None
    upstream: UpstreamClient
    idp_client: httpx.AsyncClient
    pool: BackendPool
    limiter: Limiter
    store: StateStore
    proxy: ProxyHandler
    metrics: Metrics
    started_at: int
    # Renders GET /metrics (one process, or every worker merged).
    exposition: Callable[[], bytes]

    @staticmethod
    def json(body: Any, status: int = 200) -> Response:
        return Response(orjson.dumps(body), status_code=status, media_type="application/json")
