"""A backend's circuit breaker: consecutive failures open it, and one probe request closes it again."""

from __future__ import annotations

import time
from collections.abc import Callable

from gateway.backends.settings import BreakerSettings

__all__ = ["CircuitBreaker"]


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
