"""Request context: a request id on every response, and one record per request reported at its end.

The request id is always the gateway's own (random); a client's ``x-request-id`` is kept apart, as
``client_request_id`` in the log line and the trace, so that no client can choose the id another
tenant's request is known by.

A pure ASGI middleware rather than ``BaseHTTPMiddleware``, which would buffer and delay streams.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.errors import GatewayError, error_response
from gateway.proxy.headers import REQUEST_ID_HEADER, client_request_id
from gateway.record import RequestRecord
from gateway.telemetry.logs import log_request
from gateway.telemetry.metrics import Metrics

__all__ = ["RequestContextMiddleware", "record_of"]

log = logging.getLogger("gateway")

# Probes and scrapes: answered, but neither logged nor counted as traffic.
_QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def record_of(scope: Scope) -> RequestRecord:
    record: RequestRecord = scope["state"]["record"]
    return record


class RequestContextMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        metrics: Metrics,
        clock: Callable[[], float] = time.perf_counter,
        *,
        finishers: Sequence[Callable[[RequestRecord, float], None]] = (),
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.clock = clock
        # After the log line: the usage ledger and the request's trace span.
        self.finishers = tuple(finishers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = os.urandom(16).hex()
        record = RequestRecord(
            request_id=request_id,
            method=scope["method"],
            path=scope["path"],
            started=self.clock(),
            client_request_id=client_request_id(Headers(scope=scope).get(REQUEST_ID_HEADER)),
        )
        scope.setdefault("state", {})["record"] = record
        id_header = (REQUEST_ID_HEADER.encode(), request_id.encode())

        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                record.status = message["status"]
                extra = [(k.encode(), v.encode()) for k, v in record.rate_headers]
                message["headers"] = [*message.get("headers", ()), id_header, *extra]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            # The last line of defence: an envelope with the request id, never a stack trace to the client.
            ids = {"request_id": request_id}
            if record.client_request_id is not None:
                ids["client_request_id"] = record.client_request_id
            log.error("unhandled error", exc_info=exc, extra={"fields": ids})
            record.outcome = "server_error"
            if started:
                raise  # mid-response: all that is left is to close the connection
            error = GatewayError(
                "The server had an error while processing your request.", code="internal_error"
            )
            await error_response(error)(scope, receive, send_with_id)
        finally:
            for hook in record.on_end:
                try:
                    await hook(record)
                except Exception as exc:  # never let accounting break the response that already went out
                    log.error("end-of-request hook failed", exc_info=exc)
            if scope["path"] not in _QUIET_PATHS:
                finished = self.clock()
                if not record.outcome:
                    record.outcome = _outcome(record.status)
                self.metrics.observe(record, finished)
                if record.auth_failure is None:
                    # A refused credential's line is the sampled one (telemetry.logs.AuthFailureLog): one
                    # line per request would let any client that sends garbage fill the log.
                    log_request(record, finished)
                for finish in self.finishers:
                    try:
                        finish(record, finished)
                    except Exception as exc:  # as with the hooks: never break a response for accounting
                        log.error("request finisher failed", exc_info=exc)


def _outcome(status: int) -> str:
    if status == 0 or status >= 500:
        return "server_error"
    if status in (401, 403):
        return "auth_error"
    if status >= 400:
        return "client_error"
    return "ok"
