"""The proxy loop for ``/v1/chat/completions`` and ``/v1/completions``.

read and check the body → route → forward → relay, with errors mapped at each step:

* before the first byte reaches the client, an upstream failure becomes an OpenAI error with 502, 503 or
  504 (connect refused → 503, timeout → 504, a backend 5xx or a broken answer → 502);
* after it, the stream ends with an in-band ``data: {"error": ...}`` event and ``data: [DONE]``: a
  stream never just stops (peers.md #2).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

import orjson
from starlette.requests import Request
from starlette.responses import Response

from gateway.auth.principal import Principal
from gateway.config import BackendSettings, Settings
from gateway.errors import NotFound, PermissionDenied, UpstreamFailure
from gateway.proxy.body import Endpoint, ProxiedRequest, parse_request, read_body, upstream_body
from gateway.proxy.headers import client_response_headers, upstream_request_headers
from gateway.proxy.sse import DONE, EventSplitter, Usage, error_event, inspect_event
from gateway.proxy.streaming import ClientDisconnected, RelayStreamResponse, cancel_on_disconnect
from gateway.routing import AUTO, decide
from gateway.telemetry.record import RequestRecord
from gateway.upstream import UpstreamBroken, UpstreamClient, UpstreamError, UpstreamResponse

__all__ = ["BACKEND_HEADER", "ProxyHandler"]

BACKEND_HEADER = "x-gateway-backend"
_PATHS: dict[Endpoint, str] = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}
_SSE_HEADERS = [("cache-control", "no-cache"), ("x-accel-buffering", "no")]
# 499: nginx's code for "client closed request"; nobody receives it, the request log does.
_CLIENT_CLOSED = 499


class ProxyHandler:
    def __init__(
        self, settings: Settings, upstream: UpstreamClient, *, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self._settings = settings
        self._backends = settings.backends
        self._upstream = upstream
        self._clock = clock

    async def handle(
        self, request: Request, endpoint: Endpoint, principal: Principal, record: RequestRecord
    ) -> Response:
        server = self._settings.server
        body = await read_body(request, server.max_body_bytes)
        parsed = parse_request(body, endpoint, max_n=server.max_n, max_output_tokens=server.max_output_tokens)
        record.stream = parsed.stream
        backend = self._route(parsed, principal, record)
        payload = upstream_body(parsed, backend.model)
        headers = upstream_request_headers(request.headers.items(), backend, record.request_id)
        if parsed.stream:
            return await self._stream(request, backend, payload, headers, parsed, record)
        return await self._unary(request, backend, payload, headers, record, endpoint)

    def _route(self, parsed: ProxiedRequest, principal: Principal, record: RequestRecord) -> BackendSettings:
        decision = decide(parsed.model, self._backends)
        if decision is None:
            raise NotFound(
                f"The model `{parsed.model[:200]}` does not exist or you do not have access to it.",
                code="model_not_found",
                param="model",
            )
        backend = decision.candidates[0]
        asked = (AUTO,) if parsed.model == AUTO else (backend.name, backend.model)
        if not principal.may_use(*asked):
            raise PermissionDenied(
                f"This credential may not use the model `{parsed.model[:200]}`.", param="model"
            )
        record.backend = backend.name
        record.route_reasons = decision.reasons
        return backend

    async def _unary(
        self,
        request: Request,
        backend: BackendSettings,
        payload: bytes,
        headers: list[tuple[str, str]],
        record: RequestRecord,
        endpoint: Endpoint,
    ) -> Response:
        async def exchange() -> tuple[UpstreamResponse, bytes]:
            response = await self._upstream.send(
                backend, _PATHS[endpoint], body=payload, headers=headers, stream=False
            )
            try:
                return response, await response.read()
            finally:
                await response.aclose()

        try:
            response, data = await cancel_on_disconnect(request.receive, exchange())
        except ClientDisconnected:
            record.outcome = "disconnected"
            return Response(status_code=_CLIENT_CLOSED)
        except UpstreamError as exc:
            raise _failure(exc, backend, record) from None
        if response.status != 200:
            return _upstream_status(response.status, data, backend, record)
        record.ttfb = self._clock() - record.started
        record.usage = _usage_of(data)
        out = client_response_headers(response.headers)
        out.append((BACKEND_HEADER, backend.name))
        return _raw_response(data, response.status, out)

    async def _stream(
        self,
        request: Request,
        backend: BackendSettings,
        payload: bytes,
        headers: list[tuple[str, str]],
        parsed: ProxiedRequest,
        record: RequestRecord,
    ) -> Response:
        async def open_stream() -> tuple[UpstreamResponse, bytes | None]:
            response = await self._upstream.send(
                backend, _PATHS[parsed.endpoint], body=payload, headers=headers, stream=True
            )
            try:
                # Wait for the first chunk before answering: until then a failure can still be a clean
                # HTTP error (and, later, a fallback to another backend).
                first = await (response.read() if response.status != 200 else response.next_chunk())
            except BaseException:
                await response.aclose()
                raise
            if response.status != 200:
                await response.aclose()
            return response, first

        try:
            response, first = await cancel_on_disconnect(request.receive, open_stream())
        except ClientDisconnected:
            record.outcome = "disconnected"
            return Response(status_code=_CLIENT_CLOSED)
        except UpstreamError as exc:
            raise _failure(exc, backend, record) from None
        if response.status != 200:
            return _upstream_status(response.status, first or b"", backend, record)
        if first is None:
            await response.aclose()
            raise _failure(UpstreamBroken("empty stream"), backend, record)

        out = [(k, v) for k, v in client_response_headers(response.headers) if k.lower() != "cache-control"]
        out += _SSE_HEADERS
        out.append((BACKEND_HEADER, backend.name))

        def on_end(disconnected: bool) -> None:
            if disconnected:
                record.outcome = "disconnected"

        return RelayStreamResponse(
            self._relay(response, first, parsed.client_wants_usage, record),
            status=200,
            headers=out,
            on_end=on_end,
        )

    async def _relay(
        self, response: UpstreamResponse, first: bytes, client_wants_usage: bool, record: RequestRecord
    ) -> AsyncIterator[bytes]:
        splitter = EventSplitter()
        chunk: bytes | None = first
        done = False
        try:
            while chunk is not None and not done:
                out: list[bytes] = []
                for event in splitter.feed(chunk):
                    info = inspect_event(event)
                    if info.done:
                        done = True
                    elif info.error is not None:
                        record.outcome = "upstream_broken"
                        record.error_code = "backend_stream_error"
                    elif info.usage is not None:
                        record.usage = info.usage
                        if info.usage_only and not client_wants_usage:
                            continue
                    out.append(event)
                if out:
                    if record.ttfb is None:
                        record.ttfb = self._clock() - record.started
                    yield b"".join(out)
                if not done:
                    chunk = await response.next_chunk()
            if not done:
                # The backend closed the stream without [DONE]: say so instead of a silent truncation.
                raise UpstreamBroken("stream ended early")
        except UpstreamError as exc:
            record.outcome = f"upstream_{exc.kind}"
            record.error_code = "backend_stream_interrupted"
            yield (
                error_event(
                    "The backend failed while streaming the answer; the answer is incomplete.",
                    "server_error",
                    "backend_stream_interrupted",
                )
                + DONE
            )
        finally:
            await response.aclose()


def _usage_of(data: bytes) -> Usage | None:
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return Usage.from_json(body.get("usage")) if isinstance(body, dict) else None


def _raw_response(data: bytes, status: int, headers: list[tuple[str, str]]) -> Response:
    response = Response(data, status_code=status)
    response.raw_headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    return response


_FAILURES: dict[str, tuple[int, str, str]] = {
    "connect": (503, "backend_unavailable", "The backend could not be reached."),
    "timeout": (504, "backend_timeout", "The backend did not answer in time."),
    "broken": (502, "backend_error", "The backend's answer was broken off."),
}


def _failure(exc: UpstreamError, backend: BackendSettings, record: RequestRecord) -> UpstreamFailure:
    status, code, message = _FAILURES.get(exc.kind, _FAILURES["broken"])
    record.outcome = f"upstream_{exc.kind}"
    return UpstreamFailure(message, status=status, code=code, backend=backend.name)


def _upstream_status(status: int, data: bytes, backend: BackendSettings, record: RequestRecord) -> Response:
    """A backend's non-200 answer: the caller's own mistakes pass through; the backend's do not."""
    headers = [(BACKEND_HEADER, backend.name)]
    if status in (401, 403):
        # The backend refused the gateway's own key: a misconfiguration, not the caller's fault.
        record.outcome = "upstream_status"
        raise UpstreamFailure(
            "The backend refused the gateway's credentials.",
            status=502,
            code="backend_auth",
            backend=backend.name,
        )
    if status >= 500:
        record.outcome = "upstream_status"
        raise UpstreamFailure(
            "The backend failed to answer the request.",
            status=503 if status == 503 else 502,
            code="backend_error",
            backend=backend.name,
        )
    record.outcome = "client_error"
    return _raw_response(_envelope(data, status), status, [("content-type", "application/json"), *headers])


def _envelope(data: bytes, status: int) -> bytes:
    """vLLM's error body if it already is an OpenAI envelope, else one built around its message."""
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return data
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        message = f"The backend rejected the request (HTTP {status})."
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return orjson.dumps({"error": error})
