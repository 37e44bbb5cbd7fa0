"""One HTTP/1.1 connection to a backend: an asyncio protocol feeding httptools' parser, which calls back
into the answer being read (a :class:`Receiver`, :mod:`.response`'s answer); where a backend lives
(:class:`Origin`) and the request bytes written to it.

The bottom of the package: the answer (:mod:`.response`) and the client (:mod:`.pool`) import from here,
never the other way round (the import contract in pyproject.toml forbids circles)."""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Protocol, cast
from urllib.parse import urlsplit

import httptools

from gateway.upstream.base import (
    MAX_RESPONSE_HEADER_BYTES,
    UpstreamBroken,
    UpstreamConnectError,
    UpstreamHeadersTooLarge,
    header_bytes,
)

__all__ = ["Connection", "Origin", "Receiver", "request_bytes"]


class Receiver(Protocol):
    """What the parser's callbacks feed: the answer being read on a connection (HttptoolsResponse)."""

    raw_headers: list[tuple[bytes, bytes]]
    status: int
    complete: bool
    close_delimited: bool

    def headers_complete(self, status: int) -> None: ...
    def feed(self, data: bytes) -> None: ...
    def finish(self, keep_alive: bool) -> None: ...
    def fail(self, error: UpstreamBroken) -> None: ...


class Origin:
    """Where a backend lives, and its idle connections."""

    __slots__ = ("host", "host_header", "idle", "path", "port", "ssl")

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.ssl: ssl.SSLContext | None = ssl.create_default_context() if parts.scheme == "https" else None
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        default = (parts.scheme == "https" and self.port == 443) or (
            parts.scheme == "http" and self.port == 80
        )
        name = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = name if default else f"{name}:{self.port}"
        self.path = parts.path.rstrip("/")
        self.idle: deque[Connection] = deque()


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection carrying one exchange at a time; httptools calls back as bytes arrive."""

    def __init__(self, registry: set[Connection]) -> None:
        self._registry = registry  # the client's open connections, for aclose
        self._parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reused = False
        self.idle_since = 0.0
        self._response: Receiver | None = None
        # The exchange in flight's header bytes, interim (1xx) answers included: as parsed, and as received
        # before the header block ended.
        self._header_bytes = 0
        self._head_bytes = 0

    # ---- asyncio.Protocol -------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it: no isinstance check.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        response = self._response
        if response is None:  # bytes nobody asked for: the connection cannot be trusted any more
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            # An error a callback raised reaches here wrapped (HttpParserCallbackError): it is the one to
            # report, not the wrapper.
            cause = exc.__context__
            self._fail(
                cause
                if isinstance(cause, UpstreamBroken)
                else UpstreamBroken(f"bad HTTP from the backend: {type(exc).__name__}")
            )
            self.close()
            return
        if response.status == 0 and not response.complete:
            # Still in the header block: httptools holds a header's name and value until the header ends,
            # so one endless header is cut off here, by the bytes that came, before it is held whole.
            self._head_bytes += len(data)
            if self._head_bytes > MAX_RESPONSE_HEADER_BYTES:
                self._fail(_too_many_header_bytes())
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
            # Counted as they come: an endless header block stops the parser here, before it is held.
            self._header_bytes += header_bytes(name, value)
            if self._header_bytes > MAX_RESPONSE_HEADER_BYTES:
                raise UpstreamHeadersTooLarge(
                    f"response headers larger than {MAX_RESPONSE_HEADER_BYTES} bytes"
                )
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

    def start(self, response: Receiver, request: bytes) -> None:
        self._response = response
        self._header_bytes = self._head_bytes = 0
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


def _too_many_header_bytes() -> UpstreamHeadersTooLarge:
    return UpstreamHeadersTooLarge(f"response headers larger than {MAX_RESPONSE_HEADER_BYTES} bytes")


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
