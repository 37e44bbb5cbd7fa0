"""What the gateway knows about each backend at run time: requests in flight, observed latency, circuit
breaker, health. The routing decision reads a snapshot of it (``views``); it never does I/O itself.

In-flight counts are this process's own; shared counts across workers and replicas come with the state
store (the limits issue).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence

from gateway.config import BackendSettings
from gateway.routing.decision import BackendView
from gateway.routing.settings import BreakerSettings

__all__ = ["BackendPool", "BackendState", "CircuitBreaker", "Lease"]

log = logging.getLogger("gateway.routing")

# Typical end-to-end seconds before anything is observed: the published H100 single-stream figures.
_DEFAULT_LATENCY = {"diffusion": 0.88, "autoregressive": 2.87}
_EWMA = 0.2


class CircuitBreaker:
    """Closed → (``failures`` consecutive failures) → open for ``cooldown`` → half-open: one probe request;
    its success closes the breaker, its failure opens it again."""

    def __init__(self, settings: BreakerSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self._failures_to_open = settings.failures
        self._cooldown = settings.cooldown
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at < self._cooldown:
            return "open"
        return "half_open"

    def available(self) -> bool:
        state = self.state
        return state == "closed" or (state == "half_open" and not self._probing)

    def allow(self) -> bool:
        """Whether a request may be sent now; in half-open state only one probe at a time."""
        state = self.state
        if state == "closed":
            return True
        if state == "half_open" and not self._probing:
            self._probing = True
            return True
        return False

    def abandon(self) -> None:
        """The request let through never reached a verdict (the client left): let another probe go."""
        self._probing = False

    def success(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._probing = False

    def failure(self) -> None:
        self._probing = False
        self._failures += 1
        if self._opened_at is not None or self._failures >= self._failures_to_open:
            self._opened_at = self._clock()


class BackendState:
    def __init__(self, settings: BackendSettings, breaker: CircuitBreaker) -> None:
        self.settings = settings
        self.breaker = breaker
        self.in_flight = 0
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
            in_flight=self.in_flight,
            available=self.healthy and self.breaker.available(),
            expected_latency=self.latency,
        )

    def lease(self, clock: Callable[[], float]) -> Lease:
        """Count one request in flight until the lease is released (once, however often it is called)."""
        self.in_flight += 1
        return Lease(self, clock)

    def release(self) -> None:
        self.in_flight -= 1
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


class Lease:
    __slots__ = ("_clock", "_released", "_started", "_state")

    def __init__(self, state: BackendState, clock: Callable[[], float]) -> None:
        self._state = state
        self._clock = clock
        self._started = clock()
        self._released = False

    def release(self, *_: object) -> None:
        if not self._released:
            self._released = True
            self._state.release()
            self._state.observe_latency(self._clock() - self._started)


class BackendPool:
    def __init__(
        self,
        backends: Sequence[BackendSettings],
        breaker: BreakerSettings,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.states = {b.name: BackendState(b, CircuitBreaker(breaker, clock)) for b in backends}
        self.waiting = 0

    def __getitem__(self, name: str) -> BackendState:
        return self.states[name]

    def views(self) -> list[BackendView]:
        return [s.view() for s in self.states.values()]
