"""Every connection's request deadline on one timer per event loop, in slots of ``tick`` seconds.

A timer per request (``loop.call_later``, then ``cancel``) costs every request, slow or not, a timer
handle with its context copy, a push into the loop's heap (Python-level comparisons, one per level of a
heap that thousands of slow connections make deep) and a cancelled handle left behind in the heap until
it surfaces. Here arming is adding the connection to the set of the slot its deadline falls in, and
disarming is removing it: a few dictionary operations, no allocation once the slot exists. One timer
per loop fires at each slot boundary while anything is armed and expires the connections of the slots
that have passed, so a deadline is met at most one ``tick`` late (later only if the loop itself is).
"""

from __future__ import annotations

import asyncio
import math
from typing import Protocol

__all__ = ["Deadlines", "Expiring"]


class Expiring(Protocol):
    def deadline_passed(self) -> None: ...


class Deadlines:
    def __init__(self, loop: asyncio.AbstractEventLoop, tick: float) -> None:
        self.loop = loop
        self.tick = tick
        # slot number (deadline / tick, rounded up) -> the connections whose deadline falls in it
        self._slots: dict[int, set[Expiring]] = {}
        self._swept = math.floor(loop.time() / tick)  # every slot up to this one has been expired
        self._timer: asyncio.TimerHandle | None = None

    def arm(self, conn: Expiring, seconds: float) -> int:
        """Expire ``conn`` once ``seconds`` have passed; returns the slot, for :meth:`disarm`."""
        if self._timer is None:  # nothing armed: skip the slots that passed meanwhile, all empty
            self._swept = max(self._swept, math.floor(self.loop.time() / self.tick))
        slot = max(math.ceil((self.loop.time() + seconds) / self.tick), self._swept + 1)
        bucket = self._slots.get(slot)
        if bucket is None:
            bucket = self._slots[slot] = set()
        bucket.add(conn)
        if self._timer is None:
            self._schedule()
        return slot

    def disarm(self, conn: Expiring, slot: int) -> None:
        bucket = self._slots.get(slot)
        if bucket is not None:
            bucket.discard(conn)

    def _schedule(self) -> None:
        # At the next slot boundary: a deadline falling in slot s is due at s * tick.
        boundary = (math.floor(self.loop.time() / self.tick) + 1) * self.tick
        self._timer = self.loop.call_at(boundary, self._sweep)

    def _sweep(self) -> None:
        self._timer = None
        # The loop may run a timer a clock tick early: a slot is due when its boundary is (about) now.
        current = math.floor(self.loop.time() / self.tick + 1e-6)
        for slot in range(self._swept + 1, current + 1):
            self._swept = slot  # an arm from deadline_passed() lands after it
            for conn in self._slots.pop(slot, ()):
                conn.deadline_passed()
        if self._slots:
            self._schedule()
