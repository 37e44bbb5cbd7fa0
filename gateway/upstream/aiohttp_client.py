"""The upstream client on aiohttp (``server.upstream_client: aiohttp``), kept to compare with the default,
httptools (bench/run.py part 0, docs/performance.md). Unlike httpx's, its connection pool holds up under
concurrency.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import aiohttp

from gateway.upstream.base import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Deadlines,
    UpstreamBroken,
    UpstreamConnectError,
    UpstreamError,
    UpstreamResponse,
    UpstreamTimeout,
    UpstreamTooLarge,
    auth_headers,
    bounded,
    check_header_bytes,
    pool_size,
)
from gateway.upstream.settings import BackendSettings

__all__ = ["AiohttpUpstream"]

# The gateway forwards the client's own User-Agent, and relays bytes as they are (no compression).
_SKIP = frozenset({"User-Agent", "Accept-Encoding", "Accept"})


class _AiohttpResponse(UpstreamResponse):
    __slots__ = ("_response",)

    def __init__(self, response: aiohttp.ClientResponse, deadlines: Deadlines, limit: int) -> None:
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers]
        super().__init__(response.status, headers, deadlines, limit)
        self._response = response

    async def _raw_chunk(self) -> bytes:
        try:
            return await self._response.content.readany()
        except aiohttp.ClientError as exc:
            raise _translate(exc) from exc

    async def read(self) -> bytes:
        """The whole body in one call (non-streaming answers), under the total deadline."""
        try:
            data = await bounded(self._whole(), self._deadlines.total, "total")
        except aiohttp.ClientError as exc:
            raise _translate(exc) from exc
        self._ended = True
        return data

    async def _whole(self) -> bytes:
        parts: list[bytes] = []
        async for chunk in self._response.content.iter_any():
            self._received += len(chunk)
            if self._received > self._limit:
                raise UpstreamTooLarge(f"answer larger than {self._limit} bytes")
            parts.append(chunk)
        return b"".join(parts)

    async def _close(self, complete: bool) -> None:
        if complete:
            self._response.release()
        else:
            self._response.close()


class AiohttpUpstream:
    def __init__(
        self, backends: Iterable[BackendSettings], *, max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    ) -> None:
        self._pool = pool_size(list(backends))
        self._max_bytes = max_response_bytes
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        # Created on first use, inside the running loop, as aiohttp requires.
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=self._pool, limit_per_host=0, enable_cleanup_closed=True
                ),
                timeout=aiohttp.ClientTimeout(total=None),
                auto_decompress=False,
                trust_env=False,  # never route private backends through an HTTP(S)_PROXY from the env
                skip_auto_headers=_SKIP,
            )
        return self._session

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
        call = self._client().request(
            method,
            backend.base_url + path,
            data=body,
            headers=headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=t.connect, connect=t.connect),
        )
        try:
            response = await bounded(call, deadline, phase)
        except aiohttp.ClientError as exc:
            raise _translate(exc) from exc
        answer = _AiohttpResponse(response, deadlines, self._max_bytes)
        try:
            check_header_bytes(answer.headers)
        except UpstreamBroken:
            response.close()
            raise
        return answer

    async def get(self, backend: BackendSettings, path: str, *, within: float) -> tuple[int, bytes]:
        async def fetch() -> tuple[int, bytes]:
            async with self._client().get(backend.base_url + path, headers=auth_headers(backend)) as response:
                return response.status, await response.read()

        try:
            return await bounded(fetch(), asyncio.get_running_loop().time() + within, "total")
        except aiohttp.ClientError as exc:
            raise _translate(exc) from exc

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def _translate(exc: aiohttp.ClientError) -> UpstreamError:
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
        return UpstreamConnectError(type(exc).__name__)
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return UpstreamTimeout("idle")
    return UpstreamBroken(type(exc).__name__)
