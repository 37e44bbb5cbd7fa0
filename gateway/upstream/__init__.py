"""The one place that talks HTTP to backends: the upstream client behind one interface, with the
exceptions translated at this boundary, so the client library can be swapped (``server.upstream_client``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gateway.upstream.base import (
    DEFAULT_MAX_RESPONSE_BYTES,
    UpstreamBroken,
    UpstreamClient,
    UpstreamConnectError,
    UpstreamError,
    UpstreamHeadersTooLarge,
    UpstreamResponse,
    UpstreamTimeout,
    UpstreamTooLarge,
)
from gateway.upstream.settings import BackendSettings

if TYPE_CHECKING:  # httpx is imported only when it is the client (server.upstream_client: httpx)
    import httpx

__all__ = [
    "UpstreamBroken",
    "UpstreamClient",
    "UpstreamConnectError",
    "UpstreamError",
    "UpstreamHeadersTooLarge",
    "UpstreamResponse",
    "UpstreamTimeout",
    "UpstreamTooLarge",
    "build_upstream",
]


def build_upstream(
    backends: Iterable[BackendSettings],
    kind: str = "httptools",
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
) -> UpstreamClient:
    """The configured client; a given httpx transport (the tests' seam) implies httpx."""
    if transport is not None or kind == "httpx":
        from gateway.upstream.httpx_client import HttpxUpstream

        return HttpxUpstream(backends, transport=transport, max_response_bytes=max_response_bytes)
    from gateway.upstream.httptools_client import HttptoolsUpstream

    return HttptoolsUpstream(backends, max_response_bytes=max_response_bytes)
