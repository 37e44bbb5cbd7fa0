"""One HTTP/1.1 connection to a backend: an asyncio protocol feeding httptools' parser, which calls back
into the answer being read (:mod:`.response`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

import httptools

from gateway.upstream.base import UpstreamBroken, UpstreamConnectError

if TYPE_CHECKING:
    from gateway.upstream.httptools_client.pool import Origin
    from gateway.upstream.httptools_client.response import HttptoolsResponse

__all__ = ["Connection", "request_bytes"]


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection carrying one exchange at a time; httptools calls back as bytes arrive."""

    def __init__(self, registry: set[Connection]) -> None:
        self._registry = registry  # the client's open connections, for aclose
        self._parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reused = False
        self.idle_since = 0.0
        self._response: HttptoolsResponse | None = None

    # ---- asyncio.Protocol -------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it: no isinstance check.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._response is None:  # bytes nobody asked for: the connection cannot be trusted any more
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(UpstreamBroken(f"bad HTTP from the backend: {type(exc).__name__}"))
            self.close()

    def eof_received(self) -> bool | None:
        self.closed = True  # never reused from here on, even before connection_lost has run
        return None  # close our side too; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._registry.discard(self)
        response = self._response
        if response is not None and not response.complete:
            if response.close_delimited and response.status:
                # No Content-Length and not chunked: the body ends with the connection (RFC 9112 §6.3).
                response.finish(keep_alive=False)
            else:
                self._fail(UpstreamBroken("the backend closed the connection"))

    # ---- httptools callbacks ----------------------------------------------------------------------------

    # Each callback checks for an answer: one may settle and detach mid-feed (a drain given up).
    def on_header(self, name: bytes, value: bytes) -> None:
        if self._response is not None:
            self._response.raw_headers.append((name, value))

    def on_headers_complete(self) -> None:
        if (response := self._response) is not None:
            response.headers_complete(self._parser.get_status_code())

    def on_body(self, body: bytes) -> None:
        if (response := self._response) is not None:
            response.feed(body)

    def on_message_complete(self) -> None:
        if (response := self._response) is not None:
            response.finish(keep_alive=self._parser.should_keep_alive())

    # ---- used by the client -----------------------------------------------------------------------------

    def start(self, response: HttptoolsResponse, request: bytes) -> None:
        self._response = response
        assert self.transport is not None
        self.transport.write(request)

    def detach(self) -> None:
        self._response = None

    def pause(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.pause_reading()

    def resume(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()
        else:
            self._registry.discard(self)

    def _fail(self, error: UpstreamBroken) -> None:
        if self._response is not None:
            self._response.fail(error)


def request_bytes(
    method: str, origin: Origin, path: str, headers: list[tuple[str, str]], body: bytes
) -> bytes:
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers)
    # A CR or LF inside a name or value would split the header (request smuggling): refuse the request.
    if lines.count("\n") != len(headers) or lines.count("\r") != len(headers):
        raise UpstreamConnectError("a header holds a line break")
    length = f"content-length: {len(body)}\r\n" if body or method == "POST" else ""
    head = f"{method} {origin.path}{path} HTTP/1.1\r\nhost: {origin.host_header}\r\n{lines}{length}\r\n"
    return head.encode("latin-1") + body
