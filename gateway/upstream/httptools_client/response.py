"""One answer on a pooled connection, as the gateway reads it: buffered chunks with back-pressure, the
whole body for non-streamed answers, and the connection handed back to the pool or closed at its end."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Protocol

from gateway.upstream.base import (
    Deadlines,
    UpstreamBroken,
    UpstreamResponse,
    UpstreamTooLarge,
    bounded,
)
from gateway.upstream.httptools_client.connection import Connection, Origin

__all__ = ["HttptoolsResponse", "Pool"]

# A stream's unread bytes above which reading from the backend pauses until the gateway takes them.
_HIGH_WATER = 256 * 1024
# After an answer's own end ([DONE]), how long and how many bytes the HTTP message's end may still take
# before the connection is closed instead of going back to the pool.
_DRAIN_SECONDS = 1.0
_DRAIN_BYTES = 64 * 1024


class Pool(Protocol):
    """What an answer needs of its client (HttptoolsUpstream, in .pool, which imports this module): the
    size cap, and where its connection goes back (or its slot is freed) at the end."""

    max_response_bytes: int

    def release(self, origin: Origin, conn: Connection | None) -> None: ...


class HttptoolsResponse(UpstreamResponse):
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

    def __init__(self, client: Pool, origin: Origin, conn: Connection, deadlines: Deadlines) -> None:
        super().__init__(0, [], deadlines, client.max_response_bytes)
        self._client = client
        self._origin = origin
        self._conn: Connection | None = conn
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
