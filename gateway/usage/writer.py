"""Writes ledger rows off the request path: a bounded queue, drained in batches by one thread.

``submit`` is all a request pays: one append of what the row will be built from (``build`` turns it
into the row on the writer's thread). When the store is slow or down the queue fills up
to ``usage.queue_size``; past that, new records are dropped and counted (never a wait, never an error
for the client). A batch that failed to write is kept and retried with a back-off, so a store that comes
back loses nothing that was still queued. ``close`` writes what is left, within ``shutdown_timeout``.

A write that runs past ``write_timeout`` (PostgreSQL's statement timeout, or the watchdog for a server
that does not answer at all) is given up: its rows are dropped and counted (``timeout``), as the store
may or may not have them and a retry could count them twice.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from gateway.usage.records import UsageRecord
from gateway.usage.store import UsageStore, timed_out, transient

__all__ = ["UsageWriter"]

# The writer thread's niceness above the process's (Linux schedules each thread apart): on a core the event
# loop keeps busy, a batch's few milliseconds of CPU otherwise take the core in the scheduler's slices of
# several ms, which requests wait out; a few percent of a core still reaches the writer under saturation.
WRITER_NICENESS = 10

log = logging.getLogger("gateway.usage")

_EXPIRE_EVERY = 3600.0
_EXPIRE_CHUNK = 5000
_EXPIRE_CHUNKS = 10
_MAX_BACKOFF = 30.0


class UsageWriter:
    def __init__(
        self,
        store: UsageStore,
        *,
        queue_size: int,
        batch_size: int,
        flush_interval: float,
        retention_days: int | None = None,
        on_dropped: Callable[[int, str], None] = lambda n, reason: None,
        on_written: Callable[[int], None] = lambda n: None,
        write_timeout: float | None = None,
        slow_write: float | None = None,
        build: Callable[[Any], UsageRecord] | None = None,
    ) -> None:
        """``write_timeout``: seconds after which the watchdog ends a call that has not returned (twice the
        store's own statement timeout, which a live server enforces first); ``slow_write``: seconds after
        which a call is logged as slow while it runs; ``build``: what turns a submitted item into its row,
        on the writer's thread (None: items are rows already)."""
        self.store = store
        self._build = build
        self._watchdog: Watchdog | None = None
        if write_timeout is not None or slow_write is not None:
            limit = 2 * write_timeout if write_timeout is not None else float("inf")
            self._watchdog = Watchdog(
                where=store.where,
                slow=slow_write if slow_write is not None else limit,
                limit=limit,
                abort=store.abort,
            )
        # A deque, not a queue.Queue: append and popleft are atomic under the GIL, so a request pays
        # one append instead of a lock, a condition and a notify (a rejected request is cheap, so its
        # ledger row is a measurable share of its cost). One consumer (the writer thread) pops.
        self._queue: deque[Any] = deque()
        self._queue_size = queue_size
        self._batch_size = batch_size
        self._flush_interval = flush_interval
        self._retention_days = retention_days
        self._on_dropped = on_dropped
        self._on_written = on_written
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._deadline = float("inf")
        self._thread = threading.Thread(target=self._run, name="usage-writer", daemon=True)
        self._next_expiry = 0.0
        self._count_lock = threading.Lock()
        self.dropped = 0
        self.written = 0

    # ---- the request side (event loop) ------------------------------------------------------------------

    def submit(self, record: Any) -> None:
        """Queue a row, or what ``build`` makes one of: never blocks, never raises."""
        if self._stop.is_set():
            self._drop(1, "shutdown")
            return
        queued = self._queue
        if len(queued) >= self._queue_size:
            self._drop(1, "queue_full")
            return
        queued.append(record)
        if len(queued) >= self._batch_size and not self._wake.is_set():
            self._wake.set()

    @property
    def pending(self) -> int:
        return len(self._queue)

    # ---- life cycle ----------------------------------------------------------------------------------------

    def start(self) -> None:
        if self._watchdog is not None:
            self._watchdog.start()
        self._thread.start()

    def close(self, timeout: float) -> None:
        """Stop taking records and write those queued, for at most ``timeout`` seconds (blocking: run it
        in a worker thread from async code). What could not be written by then is counted as dropped."""
        self._deadline = time.monotonic() + timeout
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout + 1)
        if self._watchdog is not None and not self._thread.is_alive():
            # A writer still waiting on its store keeps its watchdog, the one thing that can end the wait.
            self._watchdog.close()
        self.store.dispose()

    # ---- the writer thread --------------------------------------------------------------------------------

    def _run(self) -> None:
        _below_the_event_loop()
        batch: list[UsageRecord] = []
        failures = 0
        while True:
            if not batch:
                # A wake-up is for what is queued now: taken here, so a later partial batch waits its turn.
                self._wake.clear()
                batch = self._take()
            if batch:
                try:
                    with self._watch(f"writing {len(batch)} records"):
                        self.store.write(batch)
                except Exception as exc:
                    if self._timed_out(exc):
                        self._give_up(batch)
                        failure = None
                    else:
                        # Refused rows are written one by one: only a transient failure is left to retry.
                        failure = exc if transient(exc) else self._write_each(batch, exc)
                else:
                    self._wrote(len(batch))
                    failure = None
                if failure is None:
                    if failures:
                        log.info("usage ledger: %s is writable again", self.store.where)
                    failures = 0
                    batch = []
                else:
                    # The store is down or slow: keep the batch, retry; the queue bounds what waits.
                    failures += 1
                    if failures == 1 or failures % 20 == 0:
                        log.warning(
                            "usage ledger: writing %d records to %s failed (%s); retrying",
                            len(batch),
                            self.store.where,
                            type(failure).__name__,
                        )
            self._expire()
            if self._stop.is_set():
                if not batch and not self._queue:
                    return
                if time.monotonic() >= self._deadline:
                    left = len(batch) + len(self._queue)
                    log.error("usage ledger: %d records not written before shutdown", left)
                    self._drop(left, "shutdown")
                    return
                if batch:
                    time.sleep(min(0.1, max(0.0, self._deadline - time.monotonic())))
                continue
            if batch:
                self._stop.wait(min(_MAX_BACKOFF, self._flush_interval * 2 ** min(failures, 8)))
            elif len(self._queue) < self._batch_size:
                self._wake.wait(self._flush_interval)

    def _write_each(self, batch: list[UsageRecord], refusal: Exception) -> Exception | None:
        """The store refused the batch: write its rows one by one, so that a row it refuses costs that row
        alone and not its batch (other principals' rows included). Returns the exception when the store
        failed transiently meanwhile (nothing was written: the batch is kept and retried), else None."""
        try:
            with self._watch(f"writing {len(batch)} records one by one"):
                refused = self.store.write_each(batch)
        except Exception as exc:
            if self._timed_out(exc):
                self._give_up(batch)
                return None
            if transient(exc):
                return exc
            # Every row fails the same way (a permission, a schema this gateway cannot write to).
            refused = len(batch)
            refusal = exc
        if refused:
            log.error(
                "usage ledger: %s refused %d of %d records (%s)",
                self.store.where,
                refused,
                len(batch),
                type(refusal).__name__,
            )
            self._drop(refused, "refused")
        self._wrote(len(batch) - refused)
        return None

    def _watch(self, what: str) -> AbstractContextManager[None]:
        return self._watchdog.watch(what) if self._watchdog is not None else nullcontext()

    def _timed_out(self, exc: Exception) -> bool:
        return timed_out(exc) or (self._watchdog is not None and self._watchdog.fired)

    def _give_up(self, batch: list[UsageRecord]) -> None:
        log.warning(
            "usage ledger: writing %d records to %s timed out; they are dropped", len(batch), self.store.where
        )
        self._drop(len(batch), "timeout")

    def _wrote(self, count: int) -> None:
        if count > 0:
            self.written += count
            self._on_written(count)

    def _take(self) -> list[UsageRecord]:
        queued = self._queue
        take = min(len(queued), self._batch_size)
        pop = queued.popleft
        items = [pop() for _ in range(take)]
        build = self._build
        if build is None:
            return items
        rows = []
        for item in items:
            try:
                rows.append(build(item))
            except Exception:  # a row that cannot be built costs that row, never the writer thread
                log.exception("usage ledger: a record could not be made into a row")
                self._drop(1, "refused")
        return rows

    def _expire(self) -> None:
        if self._retention_days is None or time.monotonic() < self._next_expiry:
            return
        self._next_expiry = time.monotonic() + _EXPIRE_EVERY
        removed = 0
        try:
            # In chunks, a few per turn of the loop: an old ledger's first clean-up neither runs past the
            # write timeout nor holds back the batches queued meanwhile.
            for _ in range(_EXPIRE_CHUNKS):
                with self._watch(f"removing up to {_EXPIRE_CHUNK} expired records"):
                    chunk = self.store.expire(self._retention_days, limit=_EXPIRE_CHUNK)
                removed += chunk
                if chunk < _EXPIRE_CHUNK:
                    break
            else:
                self._next_expiry = time.monotonic()  # more to remove: on the next turn
        except Exception as exc:
            self._next_expiry = time.monotonic() + min(_EXPIRE_EVERY, 60.0)
            log.warning("usage ledger: retention clean-up failed (%s)", type(exc).__name__)
        if removed:
            log.info("usage ledger: %d records past %d days removed", removed, self._retention_days)

    def _drop(self, count: int, reason: str) -> None:
        if count <= 0:
            return
        with self._count_lock:  # both the event loop and the writer thread drop
            self.dropped += count
        self._on_dropped(count, reason)


# ---- the watchdog ---------------------------------------------------------------------------------------


class Watchdog:
    """Watches the writer's calls to its store: a slow call is logged while it still runs, and one that has
    run past its time has the store's connections ended. A thread of its own because the writer's thread is
    the one that waits: a PostgreSQL that stopped answering altogether (frozen, paused, its host gone
    without a reset) never reaches its own statement timeout, and a blocked read of its socket has none."""

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
                # No abort (no write timeout) and the warning given: nothing left to do until the call ends.
                self._cond.wait(max(0.001, wake - self._clock()) if wake != float("inf") else None)


def _below_the_event_loop() -> None:
    """Lower this thread's scheduling priority (Linux: a thread has its own niceness); elsewhere, or where
    the system refuses, it keeps the process's."""
    get_id = getattr(threading, "get_native_id", None)
    if get_id is None or not hasattr(os, "setpriority"):
        return
    try:
        tid = get_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + WRITER_NICENESS)
    except OSError:
        return
