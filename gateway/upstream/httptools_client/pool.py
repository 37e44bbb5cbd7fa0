"""The client itself: at most ``pool_size`` exchanges at once, idle keep-alive connections per backend,
and the one retry of a request whose reused connection the server had just closed."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable

from gateway.upstream.base import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Deadlines,
    UpstreamBroken,
    UpstreamConnectError,
    UpstreamResponse,
    UpstreamTimeout,
    auth_headers,
    bounded,
    pool_size,
)
from gateway.upstream.httptools_client.connection import Connection, Origin, request_bytes
from gateway.upstream.httptools_client.response import HttptoolsResponse
from gateway.upstream.settings import BackendSettings

__all__ = ["HttptoolsUpstream"]

# Idle connections older than this are closed rather than reused: below uvicorn's (and so vLLM's) default
# keep-alive timeout of 5 s, so the server rarely closes a connection the gateway is about to reuse.
_KEEPALIVE = 4.0


class HttptoolsUpstream:
    """The UpstreamClient: HttptoolsResponse hands its connection back through ``release``."""

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
        self._origins: dict[str, Origin] = {}
        self._open: set[Connection] = set()

    def _origin(self, base_url: str) -> Origin:
        origin = self._origins.get(base_url)
        if origin is None:
            origin = self._origins[base_url] = Origin(base_url)
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

    def release(self, origin: Origin, conn: Connection | None) -> None:
        if conn is not None:
            conn.idle_since = asyncio.get_running_loop().time()
            conn.reused = True
            origin.idle.append(conn)
        self._hand_on()

    async def _connection(self, origin: Origin, connect: float) -> Connection:
        loop = asyncio.get_running_loop()
        now = loop.time()
        idle = origin.idle
        while idle:
            conn = idle.pop()  # the most recently used: the least likely to have been closed
            if not conn.closed and now - conn.idle_since < _KEEPALIVE:
                return conn
            conn.close()
        conn = Connection(self._open)
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
        request = request_bytes(method, origin, path, headers, body)
        await self._slot(deadline)
        try:
            for _ in range(2):
                conn = await self._connection(origin, t.connect)
                response = HttptoolsResponse(self, origin, conn, deadlines)
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
