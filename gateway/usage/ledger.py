"""The ledger as the app uses it: built from ``usage:``, fed one row per finished proxied request,
started and flushed with the app's lifespan, queried from a worker thread."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from gateway.telemetry.record import RequestRecord
from gateway.usage.query import UsageQuery, summarize
from gateway.usage.records import from_request
from gateway.usage.settings import UsageSettings
from gateway.usage.store import UsageStore
from gateway.usage.writer import UsageWriter

__all__ = ["Ledger"]

log = logging.getLogger("gateway.usage")


class Ledger:
    def __init__(self, settings: UsageSettings, *, dropped: Any = None, written: Any = None) -> None:
        """``dropped`` and ``written`` are Prometheus counters (or anything with ``inc(n)``)."""
        self.settings = settings
        self.store = UsageStore(settings.url.get_secret_value())
        self.writer = UsageWriter(
            self.store,
            queue_size=settings.queue_size,
            batch_size=settings.batch_size,
            flush_interval=settings.flush_interval,
            retention_days=settings.retention_days,
            on_dropped=dropped.inc if dropped is not None else lambda n: None,
            on_written=written.inc if written is not None else lambda n: None,
        )

    def finish(self, record: RequestRecord, finished: float) -> None:
        """A finished request: one row for each proxied API call, whatever its outcome."""
        if record.api is not None:
            self.writer.submit(from_request(record, finished))

    def start(self) -> None:
        self.writer.start()

    async def close(self) -> None:
        await asyncio.to_thread(self.writer.close, self.settings.shutdown_timeout)

    async def summarize(self, query: UsageQuery) -> list[dict[str, Any]]:
        return await asyncio.to_thread(summarize, self.store, query)
