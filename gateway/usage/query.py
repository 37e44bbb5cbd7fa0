"""Reading the ledger: totals grouped by day, key, backend or model, since a point in time.

By key, a row is one principal of one kind: an API key and a JWT subject of the same name are two rows
(``kind``: key, jwt, anonymous; None for a request that never authenticated), never one sum.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Literal, get_args

from sqlalchemy import case, func, select

from gateway.usage.schema import usage_records
from gateway.usage.store import UsageStore

__all__ = ["GROUPS", "KINDS", "Group", "Kind", "UsageQuery", "parse_since", "summarize"]

Group = Literal["day", "key", "backend", "model", "api", "tier"]
GROUPS: tuple[str, ...] = get_args(Group)
Kind = Literal["key", "jwt", "anonymous"]
KINDS: tuple[str, ...] = get_args(Kind)

_COLUMN = {
    "day": usage_records.c.day,
    "key": usage_records.c.principal,
    "backend": usage_records.c.backend,
    "model": usage_records.c.model,
    "api": usage_records.c.api,
    "tier": usage_records.c.tier,
}
# ASCII digits: \d would take any script's digits, which int() reads as numbers too.
_DURATION = re.compile(r"^([0-9]{1,6})([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
MAX_SINCE_DAYS = 3660


def parse_since(value: str, *, now: float | None = None) -> float:
    """``7d``, ``12h``, ``30m`` before now, or an ISO date or datetime (UTC when no zone): Unix seconds.
    Raises ValueError with a readable reason."""
    from datetime import UTC, datetime

    now = time.time() if now is None else now
    text = value.strip()
    match = _DURATION.match(text)
    if match:
        seconds = int(match.group(1)) * _UNIT[match.group(2)]
        if seconds > MAX_SINCE_DAYS * 86400:
            raise ValueError(f"since: {text} is longer than {MAX_SINCE_DAYS} days")
        return now - seconds
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        reason = f"since: {text[:40]!r} is neither a duration like 7d or 12h nor an ISO date"
        raise ValueError(reason) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


@dataclass(frozen=True, slots=True)
class UsageQuery:
    since: float
    by: Group = "key"
    # One principal only (an ordinary key sees only its own rows: the API sets both).
    principal: str | None = None
    principal_kind: str | None = None
    limit: int = 1000


def summarize(store: UsageStore, q: UsageQuery) -> list[dict[str, Any]]:
    """One row per group, busiest backend time first (by day: in date order)."""
    store.migrate()
    t = usage_records.c
    group = _COLUMN[q.by].label(q.by)
    # By key: the principal's kind is part of the group (a key and a JWT subject may share a name).
    groups = [group, t.principal_kind.label("kind")] if q.by == "key" else [group]
    backend_seconds = func.sum(t.backend_seconds).label("backend_seconds")
    stmt = (
        select(
            *groups,
            func.count().label("requests"),
            func.sum(case((t.outcome == "ok", 0), else_=1)).label("errors"),
            func.sum(case((t.fallback.is_(None), 0), else_=1)).label("fallbacks"),
            func.sum(t.prompt_tokens).label("prompt_tokens"),
            func.sum(t.completion_tokens).label("completion_tokens"),
            func.sum(t.reasoning_tokens).label("reasoning_tokens"),
            backend_seconds,
            func.avg(t.ttfb_ms).label("avg_ttfb_ms"),
            func.avg(t.canvas_fill).label("avg_canvas_fill"),
        )
        .where(t.ts >= q.since)
        .group_by(*groups)
        .limit(q.limit)
    )
    if q.principal is not None:
        stmt = stmt.where(t.principal == q.principal)
    if q.principal_kind is not None:
        stmt = stmt.where(t.principal_kind == q.principal_kind)
    stmt = stmt.order_by(group) if q.by == "day" else stmt.order_by(backend_seconds.desc(), *groups)
    with store.engine.connect() as conn:
        rows = conn.execute(stmt).mappings().all()
    return [_clean(dict(row)) for row in rows]


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("requests", "errors", "fallbacks", "prompt_tokens", "completion_tokens", "reasoning_tokens"):
        row[key] = int(row[key] or 0)
    row["backend_seconds"] = round(float(row["backend_seconds"] or 0.0), 3)
    for key, digits in (("avg_ttfb_ms", 1), ("avg_canvas_fill", 4)):
        value = row[key]
        row[key] = round(float(value), digits) if value is not None else None
    return row
