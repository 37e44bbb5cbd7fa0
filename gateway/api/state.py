"""What the routes share: built once by the app factory, handed to requests through ``app.state``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from starlette.responses import Response

from gateway.auth import Authenticator
from gateway.auth.keys import KeyStore
from gateway.auth.principal import Principal
from gateway.backends.state import BackendPool
from gateway.config import Settings
from gateway.limits.limiter import Limiter
from gateway.limits.store import StateStore
from gateway.proxy.handler import ProxyHandler
from gateway.record import RequestRecord
from gateway.shadow.runner import ShadowRunner
from gateway.telemetry.metrics import Metrics
from gateway.upstream import UpstreamClient
from gateway.usage.ledger import Ledger

if TYPE_CHECKING:  # imported only when tracing is on: off, nothing from opentelemetry is loaded
    import httpx

    from gateway.telemetry.tracing import Tracer

__all__ = ["GatewayState"]


@dataclass(slots=True)
class GatewayState:
    settings: Settings
    auth: Authenticator
    keys: KeyStore | None
    upstream: UpstreamClient
    idp_client: httpx.AsyncClient | None  # with a JWT issuer only
    pool: BackendPool
    limiter: Limiter
    store: StateStore
    proxy: ProxyHandler
    metrics: Metrics
    started_at: int
    # Renders GET /metrics (one process, or every worker merged).
    exposition: Callable[[], bytes]
    # The usage ledger (None with usage.enabled: false), the tracer (None with tracing off), and
    # what runs once a request has finished (ledger row, end of the trace span).
    ledger: Ledger | None = None
    tracer: Tracer | None = None
    finishers: tuple[Callable[[RequestRecord, float], None], ...] = ()
    # Shadow evaluation (None unless a share is set): its finisher is among the above.
    shadow: ShadowRunner | None = None

    async def aclose(self) -> None:
        """Close what the app factory opened: shadow evaluation's workers, the upstream, identity-provider
        and state-store clients, then the ledger (its queued rows written) and the tracer. At shutdown,
        once every request has finished; and by commands that build the app without serving it (``gateway
        check-config``)."""
        if self.shadow is not None:  # before the upstream client: its workers use it
            await self.shadow.aclose()
        await self.upstream.aclose()
        if self.idp_client is not None:
            await self.idp_client.aclose()
        await self.store.aclose()
        if self.ledger is not None:
            await self.ledger.close()
        if self.tracer is not None:
            await asyncio.to_thread(self.tracer.shutdown)

    async def count_request(self, principal: Principal, record: RequestRecord) -> None:
        """Count a request to a route that is not proxied against the principal's request rate: a 429
        when it is spent, and the rate's headers on the answer otherwise."""
        record.rate_headers = (await self.limiter.admit_request(principal)).headers

    @staticmethod
    def json(body: Any, status: int = 200) -> Response:
        return Response(orjson.dumps(body), status_code=status, media_type="application/json")
