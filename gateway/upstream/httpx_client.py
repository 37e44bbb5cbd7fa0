"""The upstream client on httpx: the reference implementation, and the test seam (``MockTransport``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import httpx

from gateway.upstream.base import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Deadlines,
    UpstreamBroken,
    UpstreamConnectError,
    UpstreamError,
    UpstreamResponse,
    UpstreamTimeout,
    auth_headers,
    bounded,
    check_header_bytes,
    pool_size,
)
from gateway.upstream.settings import BackendSettings

__all__ = ["HttpxUpstream"]


class _HttpxResponse(UpstreamResponse):
    __slots__ = ("_iter", "_response")

    def __init__(self, response: httpx.Response, deadlines: Deadlines, limit: int) -> None:
        super().__init__(response.status_code, response.headers.multi_items(), deadlines, limit)
        self._response = response
        self._iter = response.aiter_raw()

    async def _raw_chunk(self) -> bytes:
        try:
            return await self._iter.__anext__()
        except StopAsyncIteration:
            return b""
        except httpx.HTTPError as exc:
            raise _translate(exc) from exc

    async def _close(self, complete: bool) -> None:
        await self._response.aclose()


class HttpxUpstream:
    def __init__(
        self,
        backends: Iterable[BackendSettings],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        pool = pool_size(list(backends))
        self._max_bytes = max_response_bytes
        self._client = httpx.AsyncClient(
            transport=transport,
            limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
            # Deadlines are applied per phase with asyncio (first byte, idle, total), not per socket read.
            timeout=None,  # noqa: S113
            follow_redirects=False,
            trust_env=False,  # never route private backends through an HTTP(S)_PROXY from the env
            # httpx asks for gzip by default, but the relay passes bytes on undecoded: ask for
            # none, so a backend that compresses when asked never corrupts an answer.
            headers={"accept-encoding": "identity"},
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
        loop = asyncio.get_running_loop()
        t = backend.timeouts
        deadlines = Deadlines.start(t, loop.time(), stream)
        request = self._client.build_request(
            method,
            backend.base_url + path,
            content=body,
            headers=headers,
            timeout=httpx.Timeout(connect=t.connect, read=None, write=t.idle, pool=t.connect),
        )
        deadline, phase = deadlines.headers(stream)
        try:
            response = await bounded(self._client.send(request, stream=True), deadline, phase)
        except httpx.HTTPError as exc:
            raise _translate(exc) from exc
        answer = _HttpxResponse(response, deadlines, self._max_bytes)
        try:
            check_header_bytes(answer.headers)
        except UpstreamBroken:
            await response.aclose()
            raise
        return answer

    async def get(self, backend: BackendSettings, path: str, *, within: float) -> tuple[int, bytes]:
        call = self._client.get(backend.base_url + path, headers=auth_headers(backend))
        try:
            response = await bounded(call, asyncio.get_running_loop().time() + within, "total")
        except httpx.HTTPError as exc:
            raise _translate(exc) from exc
        return response.status_code, response.content

    async def aclose(self) -> None:
        await self._client.aclose()


def _translate(exc: httpx.HTTPError) -> UpstreamError:
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return UpstreamConnectError(type(exc).__name__)
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamTimeout("idle")
    return UpstreamBroken(type(exc).__name__)
