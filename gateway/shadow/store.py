"""Where shadow samples are kept: the ``shadow_samples`` table of the usage database (``usage.url``).

The ledger's rules hold for it: the same database, reached the same way (gateway/usage/store.py: a new
SQLite file and its side files readable by their owner only, the PostgreSQL URL a secret, writes bounded by
``usage.write_timeout``), the same versioned schema (gateway/usage/schema.py), the same cleaning of every
row before it is written (gateway/usage/cleaning.py), written off the request's path (by the shadow
workers, through one thread), and deleted past its retention (``shadow.retention_days``). On PostgreSQL the
table is readable by the gateway's own role alone. Prompts, answers, the judge's reason and the scorer's top
features are in a row only when ``shadow.store_content`` is on; the caller leaves them out otherwise.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import URL

from gateway.usage.cleaning import RowCleaner
from gateway.usage.schema import shadow_samples
from gateway.usage.store import UsageStore

__all__ = ["SampleRow", "SampleStore"]


class SampleRow(NamedTuple):
    ts: float  # Unix seconds (UTC) when the sample was judged (or discarded)
    day: str  # its UTC day, YYYY-MM-DD
    request_id: str  # the client request's id (the ledger's row has the same)
    principal: str | None
    principal_kind: str | None
    tier: str | None
    api: str  # chat | completions
    routed_to: str  # the backend that answered the client
    routed_kind: str  # its kind: diffusion | autoregressive
    shadow_backend: str  # the backend that answered the shadow request
    judge_backend: str | None
    score: float  # the difficulty score the decision read
    threshold: float | None  # the threshold it held the score against
    bucket: str  # the score's tenth: "0.0" to "0.9"
    route: str  # the route reasons, comma-separated
    outcome: str  # regret | missed_saving | agreed | discarded | unjudged
    verdict: str | None  # same | diffusion_worse | diffusion_better, when the judge agreed with itself
    discarded: str | None  # why no verdict: shadow_failed, truncated, judge_failed, unparsable, inconsistent
    shadow_seconds: float  # backend-seconds of the shadow request
    judge_seconds: float  # backend-seconds of the judge requests
    shadow_tokens: int
    judge_tokens: int
    # Only with shadow.store_content:
    judge_reason: str | None
    top_features: str | None  # JSON: the features that pushed the score most
    request: str | None  # JSON: {"messages": [...]} or {"prompt": ...}
    routed_answer: str | None  # the answer the client received
    shadow_answer: str | None  # the other backend's answer


_CLEANER = RowCleaner(shadow_samples, SampleRow._fields)


class SampleStore:
    """Blocking, like the ledger's store: the gateway calls it from a worker thread, the CLI directly."""

    def __init__(
        self, url: str | URL, *, connect_timeout: float = 5.0, write_timeout: float | None = None
    ) -> None:
        self._store = UsageStore(url, connect_timeout=connect_timeout, write_timeout=write_timeout)

    @property
    def where(self) -> str:
        return self._store.where

    def write(self, row: SampleRow) -> None:
        clean = _CLEANER.clean(row, SampleRow._make)
        with self._store.writing() as conn:
            conn.execute(insert(shadow_samples), [clean._asdict()])

    def expire(self, retention_days: int, *, now: float | None = None) -> int:
        """Delete the samples older than the retention; returns how many went."""
        cutoff = (time.time() if now is None else now) - retention_days * 86400
        with self._store.writing() as conn:
            return int(conn.execute(delete(shadow_samples).where(shadow_samples.c.ts < cutoff)).rowcount)

    def samples(self, since: float, *, judged_with_content: bool = False) -> list[dict[str, Any]]:
        """Samples since ``since`` (Unix seconds), oldest first; ``judged_with_content``: only those with a
        verdict and their request's text (what labels are made of)."""
        self._store.migrate()
        t = shadow_samples.c
        stmt = select(shadow_samples).where(t.ts >= since).order_by(t.ts, t.id)
        if judged_with_content:
            stmt = stmt.where(t.verdict.is_not(None), t.request.is_not(None))
        with self._store.engine.connect() as conn:
            return [dict(row) for row in conn.execute(stmt).mappings()]

    def dispose(self) -> None:
        self._store.dispose()
