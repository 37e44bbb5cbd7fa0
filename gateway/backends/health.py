"""Background health probes: each backend's ``/health``, so routing and ``/readyz`` see it without a
request having to fail first."""

from __future__ import annotations

import asyncio
import logging

from gateway.backends.state import BackendPool, BackendState
from gateway.upstream import UpstreamClient, UpstreamError

__all__ = ["probe_forever", "probe_once"]

log = logging.getLogger("gateway.routing")

PROBE_TIMEOUT = 2.0


async def _probe(state: BackendState, upstream: UpstreamClient) -> None:
    try:
        status, _ = await upstream.get(state.settings, "/health", within=PROBE_TIMEOUT)
        healthy = status == 200
    except UpstreamError:
        healthy = False
    if healthy != state.healthy:
        log.warning(
            "backend %s",
            "healthy again" if healthy else "failed its health probe",
            extra={"fields": {"backend": state.settings.name}},
        )
    state.healthy = healthy
    if state.shared is not None:
        await state.shared.refresh(state)


async def probe_once(pool: BackendPool, upstream: UpstreamClient) -> None:
    await asyncio.gather(*(_probe(state, upstream) for state in pool.states.values()))


async def probe_forever(pool: BackendPool, upstream: UpstreamClient, interval: float) -> None:
    while True:
        await probe_once(pool, upstream)
        await asyncio.sleep(interval)
