"""What the edge protocol shares within one worker process: the settings, the open-connection counts,
and the counters it reports to."""

from __future__ import annotations

import asyncio
import heapq
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.edge.deadlines import Deadlines
from gateway.edge.settings import EdgeSettings
from gateway.errors import NotFound, error_response
from gateway.telemetry.metrics import Metrics

__all__ = ["OPERATOR_PATHS", "OPERATOR_SCOPE_KEY", "EdgeState", "edge_of"]

log = logging.getLogger("gateway.edge")
# Seconds between two log lines about slow or refused clients: under abuse there are thousands a second,
# and one line with the counts says as much (the metrics have them exactly).
_LOG_EVERY = 10.0
# The line names the client addresses behind most of them (what an operator blocks), counted per line in
# a dict bounded for a flood from many addresses; past the bound, a new address is only in the total.
_TOP_CLIENTS = 5
_MAX_CLIENTS = 10_000

OPERATOR_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# Set in the ASGI scope of requests that came in on the operator listener.
OPERATOR_SCOPE_KEY = "gateway.operator"
# How late a request deadline may be met, at most (the Deadlines' slot): well inside the "closed within
# its deadline + 1 s" target, and a quarter of the shortest deadline for the short ones tests set.
_DEADLINE_TICK = 0.1


class EdgeState:
    def __init__(self, settings: EdgeSettings, cap: int, metrics: Metrics, app: ASGIApp) -> None:
        self.settings = settings
        self.cap = cap
        self.metrics = metrics
        self.open = {"main": 0, "operator": 0}
        # The operator listener's port(s): configured, or the one bound when it was 0 (tests).
        self.operator_ports: set[int] = set()
        if settings.operator_port:
            self.operator_ports.add(settings.operator_port)
        self.operator_app: ASGIApp = _OperatorOnly(app)
        self._unlogged: dict[str, int] = {}
        self._clients: dict[str, int] = {}  # by client address, since the last line
        self._logged_at = 0.0
        self._tick = min(_DEADLINE_TICK, settings.header_timeout / 4, settings.body_timeout / 4)
        self._deadlines: Deadlines | None = None
        metrics.connections_limit.labels("main").set(cap)
        metrics.connections_limit.labels("operator").set(settings.operator_max_connections)
        # The labelled series, looked up once: labels() takes a lock and builds a key on every call, and
        # these change on every connection (a slow one included).
        listeners = ("main", "operator")
        self._open = {name: metrics.connections_open.labels(name) for name in listeners}
        self._refused = {name: metrics.connections_refused.labels(name) for name in listeners}
        phases = ("header", "body", "send")
        self._closed = {phase: metrics.connections_closed.labels(phase) for phase in phases}

    def listener(self, local_port: int | None) -> str:
        return "operator" if local_port in self.operator_ports else "main"

    def admit(self, listener: str) -> bool:
        """Count a new connection in, or say it must be refused (the listener is at its cap: the caller
        refuses it and reports it with :meth:`refused`)."""
        cap = self.cap if listener == "main" else self.settings.operator_max_connections
        if self.open[listener] >= cap:
            return False
        self.open[listener] += 1
        self._open[listener].inc()
        return True

    def refused(self, listener: str, client: str | None) -> None:
        self._refused[listener].inc()
        self._note(f"refused_{listener}", client)

    def release(self, listener: str) -> None:
        self.open[listener] -= 1
        self._open[listener].dec()

    def closed_by_deadline(self, phase: str, client: str | None = None) -> None:
        self._closed[phase].inc()
        self._note(f"closed_{phase}_deadline", client)

    def fields_too_large(self, client: str | None) -> None:
        """A request refused with 431 before it was read whole (gateway/edge/protocol.py)."""
        self._note("header_fields_too_large", client)

    def deadlines(self, loop: asyncio.AbstractEventLoop) -> Deadlines:
        """The request deadlines' timer on ``loop`` (one per worker process; tests start servers on
        loops of their own)."""
        current = self._deadlines
        if current is None or current.loop is not loop:
            current = self._deadlines = Deadlines(loop, self._tick)
        return current

    def _note(self, event: str, client: str | None) -> None:
        self._unlogged[event] = self._unlogged.get(event, 0) + 1
        # Slow bodies never reach authentication (protocol.py starts the app once the body is in), so the
        # address is the only "who" there is for them; behind a load balancer it is the balancer's.
        clients = self._clients
        if client is not None and (client in clients or len(clients) < _MAX_CLIENTS):
            clients[client] = clients.get(client, 0) + 1
        now = time.monotonic()
        if now - self._logged_at >= _LOG_EVERY:
            fields: dict[str, object] = {**self._unlogged, "open": self.open["main"], "cap": self.cap}
            if clients:
                top = heapq.nlargest(_TOP_CLIENTS, clients.items(), key=lambda item: item[1])
                fields["top_clients"] = dict(top)
                fields["clients"] = len(clients)
            log.warning("slow or refused clients", extra={"fields": fields})
            self._unlogged.clear()
            clients.clear()
            self._logged_at = now


class _OperatorOnly:
    """The app as the operator listener serves it: /healthz, /readyz and /metrics, nothing else."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in OPERATOR_PATHS:
            error = NotFound(
                "The operator listener serves /healthz, /readyz and /metrics only.", code="unknown_url"
            )
            await error_response(error)(scope, receive, send)
            return
        scope[OPERATOR_SCOPE_KEY] = True
        await self.app(scope, receive, send)


def edge_of(app: Any) -> EdgeState | None:
    """The gateway's edge state behind whatever uvicorn wrapped around the app (proxy headers, logging);
    None for other apps (the simulator), which then get uvicorn's behaviour unchanged."""
    for _ in range(8):
        if app is None:
            return None
        edge = getattr(app, "edge", None)
        if isinstance(edge, EdgeState):
            return edge
        app = getattr(app, "app", None)
    return None
