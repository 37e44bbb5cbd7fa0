"""What bounds the gateway's own work on a backend: the backend's load, and a budget of tokens a minute.

A :class:`Gate` lets a shadow or judge request start only while the backend has room to spare: with it,
the backend runs at most ``max_load`` of its ``max_concurrency`` (every request in flight there, the
gateway's own included), so a client's request arriving meanwhile still finds a free sequence and never
waits behind this work; and, with a budget, while the tokens spent in the last minute leave room for this
request's estimate. The gate only reads the backends' state (the snapshot the routing decision reads): its
own requests are counted here, never as leases in that state, so they move no spill-over decision, breaker
or health probe.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from gateway.backends.state import BackendPool

__all__ = ["Gate", "Ticket", "TokenBudget"]

_MINUTE = 60.0


class Ticket:
    """Tokens taken from a budget: an estimate at first, the tokens really spent once :meth:`settle`d."""

    __slots__ = ("at", "tokens")

    def __init__(self, at: float, tokens: int) -> None:
        self.at = at
        self.tokens = tokens

    def settle(self, spent: int) -> None:
        self.tokens = spent


class TokenBudget:
    """Backend tokens a minute, over a sliding window; None: unbounded."""

    def __init__(self, per_minute: int | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._spent: deque[Ticket] = deque()

    def spent(self) -> int:
        """Tokens taken in the last minute."""
        cutoff = self._clock() - _MINUTE
        while self._spent and self._spent[0].at <= cutoff:
            self._spent.popleft()
        return sum(t.tokens for t in self._spent)

    def take(self, tokens: int) -> Ticket | None:
        """Take ``tokens`` when they fit in what the last minute left, else None (nothing taken)."""
        if self.per_minute is not None and self.spent() + tokens > self.per_minute:
            return None
        ticket = Ticket(self._clock(), tokens)
        if self.per_minute is not None:
            self._spent.append(ticket)
        return ticket


class Gate:
    """Room on each backend for one kind of the gateway's own work (shadow requests, or judge requests)."""

    def __init__(
        self,
        pool: BackendPool,
        max_load: float,
        per_minute: int | None,
        *,
        own: dict[str, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``own``: the gateway's own requests in flight by backend, shared by gates whose work meets on
        one backend (shadow and judge requests both count against the judge's backend)."""
        self._pool = pool
        self._max_load = max_load
        self.budget = TokenBudget(per_minute, clock)
        self._own = own if own is not None else {}

    def busy(self, name: str) -> bool:
        """Whether one more request would take ``name`` past its share, or it is unavailable."""
        view = self._pool[name].view()
        load = view.in_flight + self.own(name) + 1
        return not view.available or load > self._max_load * view.max_concurrency

    def own(self, name: str) -> int:
        """The gateway's own requests in flight at ``name``."""
        return self._own.get(name, 0)

    def enter(self, name: str, estimate: int) -> tuple[Ticket | None, str | None]:
        """A ticket and no reason when the request may start now; else None and why not (busy, budget)."""
        if self.busy(name):
            return None, "busy"
        ticket = self.budget.take(estimate)
        if ticket is None:
            return None, "budget"
        self._own[name] = self.own(name) + 1
        return ticket, None

    def leave(self, name: str) -> None:
        self._own[name] = max(0, self.own(name) - 1)
