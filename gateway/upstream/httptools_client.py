"""The default upstream client: HTTP/1.1 keep-alive connections on asyncio, parsed with httptools.

Why not a general-purpose client: on this machine aiohttp spends ~120 µs of CPU per proxied request and
httpx more, while writing the request and parsing the answer with httptools (the C parser uvicorn
already uses for the gateway's own side) costs ~25 µs (bench/run.py part 0, README Performance). The
gateway needs little of what those clients do: one method, no redirects, no cookies, no proxies, no
decompression, bodies relayed as bytes. What it does need is here:

* a pool of keep-alive connections per backend, bounded in total (``pool_size``); a connection goes back
  to the pool only when its answer was read to the end and the server allows keep-alive, and idle ones
  are dropped before the server's own keep-alive timeout (uvicorn's default is 5 s);
* a request that fails on a reused connection before any byte of the answer arrived is sent once more on
  a new one: the server closed the idle connection as it was being reused (the race every pooling client
  has; Go's net/http and urllib3 retry the same case);
* back-pressure: reading pauses while more than ``_HIGH_WATER`` bytes of a stream wait for the gateway;
* http and https (the backend's ``url``); the same deadlines and exceptions as every other client.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Iterable
from typing import cast
from urllib.parse import urlsplit

import httptools

from gateway.upstream.base import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Deadlines,
    UpstreamBroken,
    UpstreamConnectError,
    UpstreamResponse,
    UpstreamTimeout,
    UpstreamTooLarge,
    auth_headers,
    bounded,
    pool_size,
)
from gateway.upstream.settings import BackendSettings

__all__ = ["HttptoolsUpstream"]

# Idle connections older than this are closed rather than reused: below uvicorn's (and so vLLM's) default
# keep-alive timeout of 5 s, so the server rarely closes a connection the gateway is about to reuse.
_KEEPALIVE = 4.0
# A stream's unread bytes above which reading from the backend pauses until the gateway takes them.
_HIGH_WATER = 256 * 1024
# After an answer's own end ([DONE]), how long and how many bytes the HTTP message's end may still take
# before the connection is closed instead of going back to the pool.
_DRAIN_SECONDS = 1.0
_DRAIN_BYTES = 64 * 1024


class _Origin:
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
        self.idle: deque[_Connection] = deque()


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection carrying one exchange at a time; httptools calls back as bytes arrive."""

    def __init__(self, registry: set[_Connection]) -> None:
        self._registry = registry  # the client's open connections, for aclose
        self._parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reused = False
        self.idle_since = 0.0
        self._response: _Response | None = None

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

    def start(self, response: _Response, request: bytes) -> None:
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


class _Response(UpstreamResponse):
    __slots__ = (
        "_buffered",
        "_chunks",
        "_client",
        "_conn",
        "_drain",
        "_drained",
        "_error",
        "_fed",
        "_got_headers",
        "_origin",
        "_paused",
        "_waiter",
        "_whole",
        "close_delimited",
        "complete",
        "keep_alive",
        "raw_headers",
        "received",
    )

    def __init__(
        self, client: HttptoolsUpstream, origin: _Origin, conn: _Connection, deadlines: Deadlines
    ) -> None:
        super().__init__(0, [], deadlines, client.max_response_bytes)
        self._client = client
        self._origin = origin
        self._conn: _Connection | None = conn
        self.raw_headers: list[tuple[bytes, bytes]] = []
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._paused = False
        self._whole = False  # read() takes the whole body at once: no back-pressure then
        self._error: UpstreamBroken | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._got_headers: asyncio.Future[None] = self._loop.create_future()
        self._drain: asyncio.TimerHandle | None = None  # set while the message's last bytes are awaited
        self._drained = 0
        self._fed = 0  # body bytes received, against the size cap
        self.received = False  # any byte of the answer (headers included)
        self.complete = False
        self.keep_alive = False
        self.close_delimited = False

    # ---- fed by the connection --------------------------------------------------------------------------

    def headers_complete(self, status: int) -> None:
        self.received = True
        if 100 <= status < 200:  # an interim answer (RFC 9110 §15.2): the real one follows
            self.raw_headers.clear()
            return
        self.status = status
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in self.raw_headers]
        self.headers = headers
        names = {k.lower() for k, _ in headers}
        self.close_delimited = "content-length" not in names and "transfer-encoding" not in names
        if not self._got_headers.done():
            self._got_headers.set_result(None)

    def feed(self, data: bytes) -> None:
        if self._drain is not None:
            self._drained += len(data)
            if self._drained > _DRAIN_BYTES:  # more than the end of a message: not worth the wait
                self._settle(reuse=False)
            return
        self._fed += len(data)
        if self._fed > self._limit:
            # Not buffered any further (a non-streamed answer is read whole): the reader gets the error.
            self.fail(UpstreamTooLarge(f"answer larger than {self._limit} bytes"))
            self._settle(reuse=False)
            return
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered > _HIGH_WATER and not self._paused and not self._whole and self._conn is not None:
            self._paused = True
            self._conn.pause()
        self._wake()

    def finish(self, keep_alive: bool) -> None:
        if self.status == 0:  # the end of an interim answer; keep waiting for the real one
            return
        self.complete = True
        self.keep_alive = keep_alive
        if self._drain is not None:
            self._settle(reuse=keep_alive)
        self._wake()

    def fail(self, error: UpstreamBroken) -> None:
        if self._error is not None:
            return  # the first failure is the one the reader sees
        self._error = error
        if self._drain is not None:
            self._settle(reuse=False)
        if not self._got_headers.done():
            self._got_headers.set_exception(error)
            self._got_headers.exception()  # marked retrieved: the sender sees it through wait_headers
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ---- read by the gateway ----------------------------------------------------------------------------

    async def wait_headers(self) -> None:
        await self._got_headers

    async def _next_event(self) -> None:
        """Wait until the connection feeds, finishes or fails this answer."""
        self._waiter = self._loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _resume(self) -> None:
        if self._paused and self._conn is not None:
            self._paused = False
            self._conn.resume()

    def _take(self) -> bytes | None:
        if self._chunks:
            data = self._chunks.popleft() if len(self._chunks) == 1 else b"".join(self._chunks)
            self._chunks.clear()
            self._buffered = 0
            self._resume()
            return data
        if self.complete and self._error is None:
            return b""
        return None

    async def _raw_chunk(self) -> bytes:
        while (data := self._take()) is None:
            if self._error is not None:
                raise self._error
            await self._next_event()
        return data

    async def read(self) -> bytes:
        """The whole body (non-streaming answers), under the total deadline."""
        self._whole = True
        self._resume()
        if not self.complete and self._error is None:
            await bounded(self._until_complete(), self._deadlines.total, "total")
        if self._error is not None:
            raise self._error
        self._ended = True
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data

    async def _until_complete(self) -> None:
        while not self.complete and self._error is None:
            await self._next_event()

    async def _close(self, complete: bool) -> None:
        conn = self._conn
        if conn is None or self._drain is not None:
            return
        if (
            complete
            and not self.complete
            and self._error is None
            and not conn.closed
            and not self.close_delimited  # that body ends with the connection: nothing to keep
        ):
            # The caller has the whole answer ([DONE]) but the HTTP message's end, the last empty chunk, is
            # still in flight. Wait for it in the background and keep the connection: closing it here made
            # every stream open a new connection to the backend (+0.25 ms before each stream's request
            # was written, on this machine).
            self._chunks.clear()
            self._drain = self._loop.call_later(_DRAIN_SECONDS, self._settle, False)
            self._resume()
            return
        # Back to the pool only when the whole answer was read and the server keeps the connection open;
        # closing one half-way is what tells the backend to stop generating.
        self._settle(reuse=complete and self.complete and self.keep_alive and self._error is None)

    def _settle(self, reuse: bool) -> None:
        """Hand the connection back to the pool (``reuse``) or close it; either way the slot is freed."""
        conn, self._conn = self._conn, None
        if self._drain is not None:
            self._drain.cancel()
        if conn is None:
            return
        conn.detach()
        if reuse and not conn.closed:
            self._client.release(self._origin, conn)
        else:
            conn.close()
            self._client.release(self._origin, None)


class HttptoolsUpstream:
    def __init__(
        self,
        backends: Iterable[BackendSettings],
        *,
        limit: int | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self._limit = limit or pool_size(list(backends))
        self.max_response_bytes = max_response_bytes
        self._in_use = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._origins: dict[str, _Origin] = {}
        self._open: set[_Connection] = set()

    def _origin(self, base_url: str) -> _Origin:
        origin = self._origins.get(base_url)
        if origin is None:
            origin = self._origins[base_url] = _Origin(base_url)
        return origin

    # ---- the pool -----------------------------------------------------------------------------------------

    async def _slot(self, deadline: float) -> None:
        """Wait for room in the pool: at most ``pool_size`` exchanges at once."""
        if self._in_use < self._limit and not self._waiters:
            self._in_use += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await bounded(waiter, deadline, "pool")
        except UpstreamTimeout:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
            raise UpstreamConnectError("no free connection in the pool") from None
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._hand_on()  # we were handed a slot we will not use
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def _hand_on(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes to the waiter; _in_use is unchanged
                return
        self._in_use -= 1

    def release(self, origin: _Origin, conn: _Connection | None) -> None:
        if conn is not None:
            conn.idle_since = asyncio.get_running_loop().time()
            conn.reused = True
            origin.idle.append(conn)
        self._hand_on()

    async def _connection(self, origin: _Origin, connect: float) -> _Connection:
        loop = asyncio.get_running_loop()
        now = loop.time()
        idle = origin.idle
        while idle:
            conn = idle.pop()  # the most recently used: the least likely to have been closed
            if not conn.closed and now - conn.idle_since < _KEEPALIVE:
                return conn
            conn.close()
        conn = _Connection(self._open)
        try:
            await bounded(
                loop.create_connection(lambda: conn, origin.host, origin.port, ssl=origin.ssl),
                now + connect,
                "connect",
            )
        except UpstreamTimeout:
            raise UpstreamConnectError("connect timeout") from None
        except OSError as exc:
            raise UpstreamConnectError(type(exc).__name__) from None
        self._open.add(conn)
        return conn

    # ---- the UpstreamClient interface ---------------------------------------------------------------------

    async def send(
        self,
        backend: BackendSettings,
        path: str,
        *,
        method: str = "POST",
        body: bytes = b"",
        headers: list[tuple[str, str]],
        stream: bool,
    ) -> UpstreamResponse:
        loop = asyncio.get_running_loop()
        t = backend.timeouts
        deadlines = Deadlines.start(t, loop.time(), stream)
        deadline, phase = deadlines.headers(stream)
        origin = self._origin(backend.base_url)
        request = _request_bytes(method, origin, path, headers, body)
        await self._slot(deadline)
        try:
            for _ in range(2):
                conn = await self._connection(origin, t.connect)
                response = _Response(self, origin, conn, deadlines)
                conn.start(response, request)
                try:
                    await bounded(response.wait_headers(), deadline, phase)
                except UpstreamBroken:
                    conn.detach()
                    conn.close()
                    if conn.reused and not response.received:
                        continue  # the server closed this idle connection as we reused it: once more
                    raise
                except BaseException:
                    conn.detach()
                    conn.close()
                    raise
                return response
            raise UpstreamBroken("the backend closed the connection")
        except BaseException:
            self._hand_on()
            raise

    async def get(self, backend: BackendSettings, path: str, *, within: float) -> tuple[int, bytes]:
        deadline = asyncio.get_running_loop().time() + within

        async def fetch() -> tuple[int, bytes]:
            response = await self.send(
                backend, path, method="GET", headers=auth_headers(backend), stream=False
            )
            try:
                return response.status, await response.read()
            finally:
                await response.aclose()

        return await bounded(fetch(), deadline, "total")

    async def aclose(self) -> None:
        for conn in self._open:
            conn.close()
        self._open.clear()
        for origin in self._origins.values():
            origin.idle.clear()


def _request_bytes(
    method: str, origin: _Origin, path: str, headers: list[tuple[str, str]], body: bytes
) -> bytes:
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers)
    # A CR or LF inside a name or value would split the header (request smuggling): refuse the request.
    if lines.count("\n") != len(headers) or lines.count("\r") != len(headers):
        raise UpstreamConnectError("a header holds a line break")
    length = f"content-length: {len(body)}\r\n" if body or method == "POST" else ""
    head = f"{method} {origin.path}{path} HTTP/1.1\r\nhost: {origin.host_header}\r\n{lines}{length}\r\n"
    return head.encode("latin-1") + body
