"""What the gateway knows about each backend at run time: requests in flight, observed latency, circuit
breaker, health. The routing decision reads a snapshot of it (``views``); it never does I/O itself.

Each backend counts this process's requests in flight. With a shared state store (``state.redis_url``)
a :class:`SharedCount` also keeps them as leases there, so every worker and replica sees the others'
load; the view the decision reads takes the larger of the two counts, since the shared one may lag
(it is updated beside the request and refreshed by the health probe). The spill-over queue waits on
the local count alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from gateway.backends.breaker import CircuitBreaker
from gateway.backends.settings import BreakerSettings
from gateway.backends.view import BackendView
from gateway.upstream.settings import BackendSettings

__all__ = ["BackendPool", "BackendState", "Lease", "LeaseStore", "SharedCount"]

log = logging.getLogger("gateway.routing")


class LeaseStore(Protocol):
    def key(self, *parts: str) -> str: ...
    async def acquire(self, key: str, limit: int, ttl: float, lease_id: str) -> tuple[bool, int]: ...
    async def release(self, key: str, lease_id: str) -> int: ...
    async def count(self, key: str) -> int: ...


# Typical end-to-end seconds before anything is observed: the published H100 single-stream figures.
_DEFAULT_LATENCY = {"diffusion": 0.88, "autoregressive": 2.87}
_EWMA = 0.2


class BackendState:
    def __init__(
        self, settings: BackendSettings, breaker: CircuitBreaker, shared: SharedCount | None = None
    ) -> None:
        self.settings = settings
        self.breaker = breaker
        self.in_flight = 0
        # Requests in flight at this backend from every worker and replica (shared state store), when known.
        self.shared = shared
        self.shared_in_flight = 0
        self.healthy = True
        self.latency = settings.expected_latency or _DEFAULT_LATENCY.get(settings.kind, 1.0)
        self._waiters: deque[asyncio.Future[None]] = deque()

    def observe_latency(self, seconds: float) -> None:
        self.latency = (1 - _EWMA) * self.latency + _EWMA * seconds

    def view(self) -> BackendView:
        s = self.settings
        return BackendView(
            name=s.name,
            kind=s.kind,
            model=s.model,
            max_concurrency=s.max_concurrency or 1,
            in_flight=max(self.in_flight, self.shared_in_flight),
            available=self.healthy and self.breaker.available(),
            expected_latency=self.latency,
            endpoints=s.endpoints,
        )

    def lease(self, clock: Callable[[], float]) -> Lease:
        """Count one request in flight until the lease is released (once, however often it is called)."""
        self.in_flight += 1
        lease = Lease(self, clock)
        if self.shared is not None:
            self.shared.start(self, lease.id)
        return lease

    def release(self, lease_id: str | None = None) -> None:
        self.in_flight -= 1
        if self.shared is not None and lease_id:
            self.shared.end(self, lease_id)
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break

    async def wait_for_slot(self, within: float) -> bool:
        """Wait until fewer than max_concurrency requests are in flight (the spill-over queue)."""
        limit = self.settings.max_concurrency or 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while self.in_flight >= limit:
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout_at(deadline):
                    await waiter
            except TimeoutError:
                return False
        return True


class SharedCount:
    """Counts a backend's requests across workers and replicas as leases in the state store, so the
    spill-over decision sees the true load (the limits issue). Store calls run beside the request, never
    in its way: the count is for deciding, not for enforcing, and a failed call only leaves it stale."""

    def __init__(self, store: LeaseStore) -> None:
        self._store = store
        self._tasks: set[asyncio.Task[None]] = set()

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _key(self, state: BackendState) -> str:
        return self._store.key("backend", state.settings.name, "in_flight")

    def start(self, state: BackendState, lease_id: str) -> None:
        async def acquire() -> None:
            with contextlib.suppress(Exception):
                # No request outlives its backend's total timeout: the lease lasts that long, no renewal.
                ttl = state.settings.timeouts.total
                _, state.shared_in_flight = await self._store.acquire(
                    self._key(state), 1 << 30, ttl, lease_id
                )

        self._spawn(acquire())

    def end(self, state: BackendState, lease_id: str) -> None:
        async def release() -> None:
            with contextlib.suppress(Exception):
                state.shared_in_flight = await self._store.release(self._key(state), lease_id)

        self._spawn(release())

    async def refresh(self, state: BackendState) -> None:
        with contextlib.suppress(Exception):
            state.shared_in_flight = await self._store.count(self._key(state))


class Lease:
    __slots__ = ("_clock", "_released", "_started", "_state", "id")

    def __init__(self, state: BackendState, clock: Callable[[], float]) -> None:
        self._state = state
        self._clock = clock
        self._started = clock()
        self._released = False
        # Only the shared store needs an id for it.
        self.id = os.urandom(8).hex() if state.shared is not None else ""

    def release(self, *_: object) -> None:
        if not self._released:
            self._released = True
            self._state.release(self.id)
            self._state.observe_latency(self._clock() - self._started)


class BackendPool:
    def __init__(
        self,
        backends: Sequence[BackendSettings],
        breaker: BreakerSettings,
        clock: Callable[[], float] = time.monotonic,
        shared: SharedCount | None = None,
    ) -> None:
        self.shared = shared
        self.states = {b.name: BackendState(b, CircuitBreaker(breaker, clock), shared) for b in backends}
        self.waiting = 0

    def __getitem__(self, name: str) -> BackendState:
        return self.states[name]

    def views(self) -> list[BackendView]:
        return [s.view() for s in self.states.values()]
