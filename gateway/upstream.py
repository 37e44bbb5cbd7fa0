"""The one place that talks HTTP to backends.

It owns the upstream client and its connection pool, applies the per-backend timeouts, and translates the
client library's exceptions into the gateway's own at exactly this boundary, so that the client can be
swapped without touching the proxy:

    UpstreamError
    ├── UpstreamConnectError   nothing was sent: connection refused, DNS, connect timeout, pool exhausted
    ├── UpstreamTimeout        no first byte, or no next chunk, or the whole answer too late (``phase``)
    └── UpstreamBroken         the connection broke or the peer spoke bad HTTP after the request went out

Timeouts. A stream is bounded by ``first_byte`` (response headers and the first body chunk), ``idle``
(between chunks) and ``total``. A non-streaming answer is bounded by ``total`` only: vLLM sends nothing,
not even headers, until the whole answer is ready.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

import httpx

from gateway.config import BackendSettings, TimeoutSettings

__all__ = [
    "UpstreamBroken",
    "UpstreamClient",
    "UpstreamConnectError",
    "UpstreamError",
    "UpstreamResponse",
    "UpstreamTimeout",
]


class UpstreamError(Exception):
    kind = "error"


class UpstreamConnectError(UpstreamError):
    kind = "connect"


class UpstreamTimeout(UpstreamError):
    kind = "timeout"

    def __init__(self, phase: str) -> None:
        super().__init__(f"upstream timed out ({phase})")
        self.phase = phase


class UpstreamBroken(UpstreamError):
    kind = "broken"


@dataclass(slots=True)
class _Deadlines:
    first_byte: float
    idle: float
    total: float


class UpstreamResponse:
    """An open upstream response. Always closed by the caller (``aclose``), or the pool runs dry."""

    __slots__ = ("_deadlines", "_iter", "_loop", "_response", "_seen_first", "headers", "status")

    def __init__(self, response: httpx.Response, deadlines: _Deadlines) -> None:
        self._response = response
        self._deadlines = deadlines
        self._loop = asyncio.get_running_loop()
        self._iter = response.aiter_raw()
        self._seen_first = False
        self.status = response.status_code
        self.headers: list[tuple[str, str]] = response.headers.multi_items()

    async def next_chunk(self) -> bytes | None:
        """The next raw body chunk, or None at the end; raises UpstreamTimeout / UpstreamBroken."""
        d = self._deadlines
        if self._seen_first:
            deadline = min(self._loop.time() + d.idle, d.total)
            phase = "idle" if deadline < d.total else "total"
        else:
            deadline = min(d.first_byte, d.total)
            phase = "first_byte" if d.first_byte < d.total else "total"
        try:
            async with asyncio.timeout_at(deadline):
                chunk = await self._iter.__anext__()
        except StopAsyncIteration:
            return None
        except TimeoutError:
            raise UpstreamTimeout(phase) from None
        except httpx.HTTPError as exc:
            raise _translate(exc) from exc
        self._seen_first = True
        return chunk

    async def chunks(self) -> AsyncIterator[bytes]:
        while (chunk := await self.next_chunk()) is not None:
            if chunk:
                yield chunk

    async def read(self) -> bytes:
        parts = [chunk async for chunk in self.chunks()]
        return b"".join(parts)

    async def aclose(self) -> None:
        await self._response.aclose()


class UpstreamClient:
    def __init__(
        self,
        backends: Iterable[BackendSettings],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        backends = list(backends)
        # Room for every sequence each backend can run, plus headroom for health probes and queueing.
        pool = sum((b.max_concurrency or 1) for b in backends) + 16 * len(backends)
        self._client = httpx.AsyncClient(
            transport=transport,
            limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
            # Deadlines are applied per phase with asyncio (first byte, idle, total), not per socket read.
            timeout=None,  # noqa: S113
            follow_redirects=False,
            trust_env=False,  # never route private backends through an HTTP(S)_PROXY from the env
        )

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
        loop = asyncio.get_running_loop()
        t = backend.timeouts
        now = loop.time()
        deadlines = _deadlines(t, now, stream)
        request = self._client.build_request(
            method,
            backend.base_url + path,
            content=body,
            headers=headers,
            timeout=httpx.Timeout(connect=t.connect, read=None, write=t.idle, pool=t.connect),
        )
        header_deadline = deadlines.first_byte if stream else deadlines.total
        try:
            async with asyncio.timeout_at(header_deadline):
                response = await self._client.send(request, stream=True)
        except TimeoutError:
            raise UpstreamTimeout("first_byte" if stream else "total") from None
        except httpx.HTTPError as exc:
            raise _translate(exc) from exc
        return UpstreamResponse(response, deadlines)

    async def get(self, backend: BackendSettings, path: str, *, within: float) -> tuple[int, bytes]:
        """A small GET (health, metrics) with one overall timeout."""
        headers = (
            [("authorization", f"Bearer {backend.api_key.get_secret_value()}")] if backend.api_key else []
        )
        try:
            async with asyncio.timeout(within):
                response = await self._client.get(backend.base_url + path, headers=headers)
        except TimeoutError:
            raise UpstreamTimeout("total") from None
        except httpx.HTTPError as exc:
            raise _translate(exc) from exc
        return response.status_code, response.content

    async def aclose(self) -> None:
        await self._client.aclose()


def _deadlines(t: TimeoutSettings, now: float, stream: bool) -> _Deadlines:
    total = now + t.total
    return _Deadlines(first_byte=now + t.first_byte if stream else total, idle=t.idle, total=total)


def _translate(exc: httpx.HTTPError) -> UpstreamError:
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return UpstreamConnectError(type(exc).__name__)
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamTimeout("idle")
    return UpstreamBroken(type(exc).__name__)
