"""Watches the ledger writer's calls to its store: a call that is slow is logged while it still runs, and
one that has run past its time has the store's connections ended.

A thread of its own because the writer's thread is the one that waits: a PostgreSQL that stopped answering
altogether (frozen, paused, its host gone without a reset) never reaches its own statement timeout, and a
blocked read on its socket has no timeout of its own.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["Watchdog"]

log = logging.getLogger("gateway.usage")


class Watchdog:
    def __init__(
        self,
        *,
        where: str,
        slow: float,
        limit: float,
        abort: Callable[[], object],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``slow``: seconds after which a call is logged (once); ``limit``: seconds after which ``abort``
        runs, and again every ``limit`` seconds while the call still has not returned."""
        self._where = where
        self._slow = slow
        self._limit = limit
        self._abort = abort
        self._clock = clock
        self._cond = threading.Condition()
        self._what = ""
        self._started: float | None = None
        self._warned = False
        self._next_abort = 0.0
        self._closed = False
        self.fired = False  # whether the current (or last) call was aborted
        self._thread = threading.Thread(target=self._run, name="usage-watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    @contextmanager
    def watch(self, what: str) -> Iterator[None]:
        """Around one call to the store; ``what`` says what it does (``writing 500 records``)."""
        with self._cond:
            self._what = what
            self._started = self._clock()
            self._warned = False
            self._next_abort = self._started + self._limit
            self.fired = False
            self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                started, self._started = self._started, None
                warned = self._warned
            took = self._clock() - (started or 0.0)
            if not warned and took >= self._slow:
                log.warning("usage ledger: %s to %s took %.1f s", what, self._where, took)

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                if self._started is None:
                    self._cond.wait()
                    continue
                now = self._clock()
                elapsed = now - self._started
                if not self._warned and elapsed >= self._slow:
                    self._warned = True
                    log.warning(
                        "usage ledger: %s to %s has taken %.1f s so far", self._what, self._where, elapsed
                    )
                if now >= self._next_abort:
                    self.fired = True
                    self._next_abort = now + self._limit
                    log.warning(
                        "usage ledger: %s to %s has not finished in %.1f s; its connections are closed",
                        self._what,
                        self._where,
                        elapsed,
                    )
                    self._abort()
                wake = self._next_abort if self._warned else min(self._next_abort, self._started + self._slow)
                self._cond.wait(max(0.001, wake - self._clock()))
