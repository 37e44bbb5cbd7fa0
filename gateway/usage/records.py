"""A ledger row, built from the request's :class:`RequestRecord` when the request has finished.

Only identities, codes and numbers: never the credential, a header, or prompt or completion text.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import NamedTuple

from gateway.record import RequestRecord
from gateway.usage.cleaning import RowCleaner
from gateway.usage.schema import usage_records

__all__ = ["UsageRecord", "from_request", "storable"]


class UsageRecord(NamedTuple):
    """A NamedTuple rather than a frozen dataclass: every proxied request builds one on the event loop
    (a rejected one too), and a frozen dataclass's ``__init__`` sets each of the 23 fields through
    ``object.__setattr__`` (10 µs a row, against ~2 here); the tuple is also the driver's row as is."""

    ts: float  # Unix seconds (UTC) when the request finished
    day: str  # its UTC day, YYYY-MM-DD: "by day" without a per-database date function
    request_id: str
    principal: str | None  # the key's name or the JWT subject, never the secret
    principal_kind: str | None  # key | jwt | anonymous
    tier: str | None
    api: str  # chat | completions | responses | messages
    model: str | None  # the model the client asked for (may be "auto" or an alias)
    backend: str | None  # the backend that answered last
    route: str  # reason codes, comma-separated
    fallback: str | None  # from>to:reason, comma-separated
    stream: bool
    status: int
    outcome: str
    error_code: str | None
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    ttfb_ms: float | None
    duration_ms: float
    # Seconds the backends worked on it (every attempt, from send to the last byte read).
    backend_seconds: float
    sampler: str | None
    canvas_fill: float | None


def from_request(record: RequestRecord, finished: float, *, now: float | None = None) -> UsageRecord:
    """``finished`` is on the record's clock (perf_counter); ``now`` is wall time."""
    wall = time.time() if now is None else now
    usage = record.usage
    run = record.diffusion if record.backend is not None else None
    completion = usage.completion_tokens if usage is not None else 0
    return UsageRecord(
        ts=wall,
        day=_day(wall),
        request_id=record.request_id,
        principal=_cut(record.principal, 256),
        principal_kind=record.principal_kind,
        tier=_cut(record.tier, 64),
        api=record.api or "",
        model=_cut(record.model, 256),  # the client's own string
        backend=record.backend,
        route=",".join(record.route_reasons)[:1024],
        fallback=_cut(",".join(f"{a}>{b}:{why}" for a, b, why in record.fallbacks) or None, 1024),
        stream=record.stream,
        status=record.status,
        outcome=record.outcome,
        error_code=_cut(record.error_code, 64),
        prompt_tokens=usage.prompt_tokens if usage is not None else 0,
        completion_tokens=completion,
        reasoning_tokens=usage.reasoning_tokens if usage is not None else 0,
        ttfb_ms=round(record.ttfb * 1000, 3) if record.ttfb is not None else None,
        duration_ms=round((finished - record.started) * 1000, 3),
        backend_seconds=round(record.backend_seconds, 6),
        sampler=run.sampler if run is not None else None,
        canvas_fill=round(run.fill(completion), 4) if run is not None and usage is not None else None,
    )


def _day(wall: float) -> str:
    """The UTC day of ``wall``, YYYY-MM-DD; formatted once a day, not once a request."""
    # Unix time has no leap seconds: every UTC day is 86,400 s long.
    return _day_name(int(wall // 86400))


@lru_cache(maxsize=4)
def _day_name(day: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(day * 86400))


def _cut(value: str | None, limit: int) -> str | None:
    """Within the column's length: PostgreSQL refuses a longer string (and with it the whole batch)."""
    return value[:limit] if value is not None else None


# ---- what every store accepts ---------------------------------------------------------------------------

_CLEANER = RowCleaner(usage_records, UsageRecord._fields)


def storable(row: UsageRecord) -> UsageRecord:
    """The row as both stores accept it (gateway/usage/cleaning.py): run by the writer thread on every row
    before it is written, since one value a store refused made it refuse the whole batch."""
    return _CLEANER.clean(row, UsageRecord._make)
