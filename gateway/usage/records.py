"""A ledger row, built from the request's :class:`RequestRecord` when the request has finished.

Only identities, codes and numbers: never the credential, a header, or prompt or completion text.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from typing import Any, NamedTuple

from sqlalchemy import Boolean, Float, Integer, String

from gateway.record import RequestRecord
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

# PostgreSQL's INTEGER: the widest integer both stores take (SQLite's driver refuses past 64 bits, and
# not as a database error, so that such a row was retried for ever).
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_INF = math.inf
_REPLACEMENT = "\ufffd"


def _text(value: Any, limit: int, nullable: bool) -> str | None:
    if value is None:
        return None if nullable else ""
    text = (value if type(value) is str else str(value))[:limit]
    if text.isascii():
        return text.replace("\x00", _REPLACEMENT)
    # A lone surrogate cannot be encoded as UTF-8: both drivers raise before the database sees the row.
    return "".join(_REPLACEMENT if c == "\x00" or "\ud800" <= c <= "\udfff" else c for c in text)


def _integer(value: Any, nullable: bool) -> int | None:
    if value is None and nullable:
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return None if nullable else 0
    return min(max(number, _INT_MIN), _INT_MAX)


def _real(value: Any, nullable: bool) -> float | None:
    if value is None and nullable:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None if nullable else 0.0
    # NaN and infinities: SQLite stores NaN as NULL (a NOT NULL column then refuses the row), and in
    # PostgreSQL one would turn every sum over its column into NaN.
    if math.isfinite(number):
        return number
    return None if nullable else 0.0


def _columns(kind: type) -> tuple[tuple[int, int, bool], ...]:
    """(position in UsageRecord, length, nullable) of every column of this SQL type."""
    found = []
    for i, name in enumerate(UsageRecord._fields):
        column = usage_records.c[name]
        if isinstance(column.type, kind):
            found.append((i, getattr(column.type, "length", None) or 0, bool(column.nullable)))
    return tuple(found)


_TEXT = _columns(String)
_INTEGERS = _columns(Integer)
_REALS = _columns(Float)
_BOOLEANS = tuple(i for i, _, _ in _columns(Boolean))
assert len(_TEXT) + len(_INTEGERS) + len(_REALS) + len(_BOOLEANS) == len(UsageRecord._fields)


def storable(row: UsageRecord) -> UsageRecord:
    """The row as both stores accept it: text within its column's length with no NUL or lone surrogate,
    integers within PostgreSQL's INTEGER, finite floats, NULL only where the column allows it.

    Run by the writer thread on every row before it is written: a row holds what clients sent (the model
    string, a JWT subject) and what backends reported (token counts), and one value a store refused made it
    refuse the whole batch, other tenants' rows included. A clean row (nearly every one) is only looked at,
    one type and range check a value."""
    values: list[Any] | None = None
    for i, limit, nullable in _TEXT:
        value = row[i]
        if type(value) is str and len(value) <= limit and value.isascii() and "\x00" not in value:
            continue
        if value is None and nullable:
            continue
        values = values or list(row)
        values[i] = _text(value, limit, nullable)
    for i, _, nullable in _INTEGERS:
        value = row[i]
        if type(value) is int and _INT_MIN <= value <= _INT_MAX:
            continue
        values = values or list(row)
        values[i] = _integer(value, nullable)
    for i, _, nullable in _REALS:
        value = row[i]
        if type(value) is float and -_INF < value < _INF:  # False for NaN too
            continue
        if value is None and nullable:
            continue
        values = values or list(row)
        values[i] = _real(value, nullable)
    for i in _BOOLEANS:
        if type(row[i]) is not bool:
            values = values or list(row)
            values[i] = bool(row[i])
    return row if values is None else UsageRecord._make(values)
