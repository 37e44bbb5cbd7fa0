"""What every upstream client shares: the exception tree, the deadlines, and the response interface.

    UpstreamError
    ├── UpstreamConnectError   nothing was sent: connection refused, DNS, connect timeout, pool exhausted
    ├── UpstreamTimeout        no first byte, or no next chunk, or the whole answer too late (``phase``)
    └── UpstreamBroken         the connection broke or the peer spoke bad HTTP after the request went out
        ├── UpstreamTooLarge   the answer is larger than ``edge.max_upstream_response_bytes``
        └── UpstreamHeadersTooLarge  the answer's header block is larger than MAX_RESPONSE_HEADER_BYTES

Timeouts. A stream is bounded by ``first_byte`` (response headers and the first body chunk), ``idle``
(between chunks) and ``total``. A non-streaming answer is bounded by ``total`` only: vLLM sends nothing,
not even headers, until the whole answer is ready.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from gateway.errors import UpstreamError
from gateway.upstream.settings import BackendSettings, TimeoutSettings

T = TypeVar("T")

__all__ = [
    "Deadlines",
    "UpstreamBroken",
    "UpstreamClient",
    "UpstreamConnectError",
    "UpstreamError",
    "UpstreamHeadersTooLarge",
    "UpstreamResponse",
    "UpstreamTimeout",
    "UpstreamTooLarge",
    "bounded",
    "check_header_bytes",
    "header_bytes",
]


class UpstreamConnectError(UpstreamError):
    kind = "connect"


class UpstreamTimeout(UpstreamError):
    kind = "timeout"

    def __init__(self, phase: str) -> None:
        super().__init__(f"upstream timed out ({phase})")
        self.phase = phase


class UpstreamBroken(UpstreamError):
    kind = "broken"


class UpstreamTooLarge(UpstreamBroken):
    """Past the size cap the answer is not read further: a backend cannot make the gateway hold an
    unbounded answer."""


class UpstreamHeadersTooLarge(UpstreamBroken):
    """A header block past the cap is refused before anything reaches the client: the headers are held
    in memory whole, and the client sees none of them but the content type."""


# The default cap on one upstream answer's bytes (edge.max_upstream_response_bytes overrides it).
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
# The cap on one answer's header block, names and values with their separators: vLLM sends a few hundred
# bytes; uvicorn, nginx and Node refuse a request header block at 8 to 64 KiB.
MAX_RESPONSE_HEADER_BYTES = 64 * 1024


def header_bytes(name: bytes | str, value: bytes | str) -> int:
    """One header's share of the block as it came on the wire: ``name: value`` and its line end."""
    return len(name) + len(value) + 4


def check_header_bytes(headers: list[tuple[str, str]], limit: int = MAX_RESPONSE_HEADER_BYTES) -> None:
    """Raise UpstreamHeadersTooLarge when the header block is over ``limit``."""
    if sum(header_bytes(k, v) for k, v in headers) > limit:
        raise UpstreamHeadersTooLarge(f"response headers larger than {limit} bytes")


@dataclass(slots=True)
class Deadlines:
    first_byte: float
    idle: float
    total: float

    @classmethod
    def start(cls, t: TimeoutSettings, now: float, stream: bool) -> Deadlines:
        total = now + t.total
        return cls(first_byte=now + t.first_byte if stream else total, idle=t.idle, total=total)

    def headers(self, stream: bool) -> tuple[float, str]:
        return (self.first_byte, "first_byte") if stream else (self.total, "total")


async def bounded(call: Awaitable[T], deadline: float, phase: str) -> T:
    """Await ``call`` until the event loop's clock reaches ``deadline``; past it, UpstreamTimeout(phase).
    Every client's waits go through here, so deadlines mean the same whichever library is underneath."""
    try:
        async with asyncio.timeout_at(deadline):
            return await call
    except TimeoutError:
        raise UpstreamTimeout(phase) from None


class UpstreamResponse:
    """An open upstream response. Always closed by the caller (``aclose``), or the pool runs dry.

    Subclasses provide ``_raw_chunk`` (the next chunk, b"" at the end, raising UpstreamError) and ``_close``.
    """

    __slots__ = ("_deadlines", "_ended", "_limit", "_loop", "_received", "_seen_first", "headers", "status")

    def __init__(
        self,
        status: int,
        headers: list[tuple[str, str]],
        deadlines: Deadlines,
        limit: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.status = status
        self.headers = headers
        self._deadlines = deadlines
        self._loop = asyncio.get_running_loop()
        self._seen_first = False
        self._ended = False
        self._limit = limit
        self._received = 0

    async def _raw_chunk(self) -> bytes:
        raise UpstreamBroken("no body reader")  # pragma: no cover - every client overrides it

    async def _close(self, complete: bool) -> None:
        return None  # pragma: no cover - every client overrides it

    def _take(self) -> bytes | None:
        """Bytes already received (b"" at the end), without waiting; None when the caller must wait."""
        return None

    async def next_chunk(self) -> bytes | None:
        """The next raw body chunk, or None at the end; raises UpstreamTimeout / UpstreamBroken."""
        chunk = self._take()
        if chunk is None:  # a deadline only for a wait: arming and cancelling a timer per chunk is not free
            d = self._deadlines
            if self._seen_first:
                deadline = min(self._loop.time() + d.idle, d.total)
                phase = "idle" if deadline < d.total else "total"
            else:
                deadline = min(d.first_byte, d.total)
                phase = "first_byte" if d.first_byte < d.total else "total"
            chunk = await bounded(self._raw_chunk(), deadline, phase)
        if not chunk:
            self._ended = True
            return None
        self._seen_first = True
        self._received += len(chunk)
        if self._received > self._limit:
            raise UpstreamTooLarge(f"answer larger than {self._limit} bytes")
        return chunk

    async def chunks(self) -> AsyncIterator[bytes]:
        while (chunk := await self.next_chunk()) is not None:
            yield chunk

    async def read(self) -> bytes:
        parts = [chunk async for chunk in self.chunks()]
        return b"".join(parts)

    async def aclose(self, *, answered: bool = False) -> None:
        """Done with the response. ``answered``: the caller saw the answer's own end (an SSE stream's
        ``[DONE]``) though the HTTP body may still have its last bytes in flight.

        A response read to its end, or answered, may go back to the pool; one abandoned half-way (a
        client that left, a rough answer) closes its connection, which is what tells the backend to stop
        generating.
        """
        await self._close(self._ended or answered)


class UpstreamClient(Protocol):
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
        """Send a request and wait for the response headers (within the first-byte or total deadline)."""

    async def get(self, backend: BackendSettings, path: str, *, within: float) -> tuple[int, bytes]:
        """A small GET (health, metrics) with one overall timeout."""

    async def aclose(self) -> None: ...


def pool_size(backends: list[BackendSettings]) -> int:
    """Room for every sequence each backend can run, plus headroom for probes and queueing."""
    return sum((b.max_concurrency or 1) for b in backends) + 16 * len(backends)


def auth_headers(backend: BackendSettings) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {backend.api_key.get_secret_value()}")] if backend.api_key else []
