"""The ledger as the app uses it: built from ``usage:``, fed one row per finished proxied request,
started and flushed with the app's lifespan, queried from a worker thread."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from gateway.record import RequestRecord
from gateway.usage.query import UsageQuery, summarize
from gateway.usage.records import UsageRecord, from_request
from gateway.usage.settings import UsageSettings
from gateway.usage.store import UsageStore
from gateway.usage.writer import UsageWriter

__all__ = ["DROP_REASONS", "Ledger"]

# queue_full: the database was slow or down; shutdown: not written in time; refused: the database
# rejected the rows themselves; timeout: a write ran past usage.write_timeout.
DROP_REASONS = ("queue_full", "shutdown", "refused", "timeout")


def _none(count: int, reason: str) -> None:
    return None


log = logging.getLogger("gateway.usage")


def _row(item: tuple[RequestRecord, float, float]) -> UsageRecord:
    record, finished, wall = item
    return from_request(record, finished, now=wall)


class Ledger:
    def __init__(self, settings: UsageSettings, *, dropped: Any = None, written: Any = None) -> None:
        """``dropped`` (by reason) and ``written`` are Prometheus counters with one label."""
        self.settings = settings
        self.store = UsageStore(
            settings.url.get_secret_value(),
            connect_timeout=settings.connect_timeout,
            write_timeout=settings.write_timeout,
        )
        self._dropped = dropped
        self._written = written
        store = self.store.url.get_backend_name()
        self.writer = UsageWriter(
            self.store,
            queue_size=settings.queue_size,
            batch_size=settings.batch_size,
            flush_interval=settings.flush_interval,
            retention_days=settings.retention_days,
            on_dropped=(lambda n, reason: dropped.labels(reason).inc(n)) if dropped is not None else _none,
            on_written=(lambda n: written.labels(store).inc(n)) if written is not None else lambda n: None,
            write_timeout=settings.write_timeout,
            slow_write=settings.slow_write,
            build=_row,
        )

    def finish(self, record: RequestRecord, finished: float) -> None:
        """A finished request: one row for each proxied API call, whatever its outcome, except a refused
        credential (401). That caller is nobody the ledger can bill, and a row each would let anyone
        without a key fill the store (kept retention_days): those are counted by reason in the metrics
        and sampled in the log instead. An authenticated caller's rejections (403, 429) keep their rows."""
        if record.api is not None and record.auth_failure is None:
            # The row is built on the writer's thread: the request pays one append. The record is not
            # changed after its finishers run.
            self.writer.submit((record, finished, time.time()))

    def start(self) -> None:
        # The series exist from the start (an alert on increase() needs the zero), created here rather
        # than at construction: `serve --workers N` builds an app in the parent only to validate it, and a
        # series touched there would leave a stale per-process file in the multiprocess directory.
        if self._dropped is not None:
            for reason in DROP_REASONS:
                self._dropped.labels(reason)
        if self._written is not None:
            self._written.labels(self.store.url.get_backend_name())
        self.writer.start()

    async def close(self) -> None:
        await asyncio.to_thread(self.writer.close, self.settings.shutdown_timeout)

    async def summarize(self, query: UsageQuery) -> list[dict[str, Any]]:
        return await asyncio.to_thread(summarize, self.store, query)
