"""The usage database's tables (the ledger's rows, shadow evaluation's samples), and its versioned
migrations.

A small ``usage_schema`` table holds the version; each migration runs once, in order, in one
transaction, under a lock where the database has one (PostgreSQL: an advisory lock, so that several
gateway workers starting together migrate once). Alembic would do the same with a second tool, a
configuration file and a scripts directory for what is one table; this is the part of it the ledger needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    insert,
    select,
    text,
)

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate", "schema_version", "shadow_samples", "usage_records"]

metadata = MetaData()


def _request_columns() -> list[Column[Any]]:
    """The columns both tables open with: the row's id, when the request finished, which request it was
    and whose (fresh objects each call: a column belongs to one table)."""
    return [
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("ts", Float, nullable=False),
        Column("day", String(10), nullable=False),
        Column("request_id", String(128), nullable=False),
        Column("principal", String(256)),
        Column("principal_kind", String(16)),
        Column("tier", String(64)),
        Column("api", String(16), nullable=False),
    ]


usage_records = Table(
    "usage_records",
    metadata,
    *_request_columns(),
    Column("model", String(256)),
    Column("backend", String(64)),
    Column("route", String(1024), nullable=False),
    Column("fallback", String(1024)),
    Column("stream", Boolean, nullable=False),
    Column("status", Integer, nullable=False),
    Column("outcome", String(32), nullable=False),
    Column("error_code", String(64)),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("reasoning_tokens", Integer, nullable=False),
    Column("ttfb_ms", Float),
    Column("duration_ms", Float, nullable=False),
    Column("backend_seconds", Float, nullable=False),
    Column("sampler", String(32)),
    Column("canvas_fill", Float),
    Index("usage_records_ts", "ts"),
    Index("usage_records_principal_ts", "principal", "ts"),
)

# Shadow evaluation's samples (gateway/shadow/, docs/shadow.md): one row per request also answered by the
# other backend, with the judge's verdict. The text columns at the end hold prompts and answers: filled only
# with shadow.store_content, and on PostgreSQL readable by the gateway's own role alone (_v2).
shadow_samples = Table(
    "shadow_samples",
    metadata,
    *_request_columns(),
    Column("routed_to", String(64), nullable=False),
    Column("routed_kind", String(16), nullable=False),
    Column("shadow_backend", String(64), nullable=False),
    Column("judge_backend", String(64)),
    Column("score", Float, nullable=False),
    Column("threshold", Float),
    Column("bucket", String(8), nullable=False),
    Column("route", String(1024), nullable=False),
    Column("outcome", String(32), nullable=False),
    Column("verdict", String(32)),
    Column("discarded", String(32)),
    Column("shadow_seconds", Float, nullable=False),
    Column("judge_seconds", Float, nullable=False),
    Column("shadow_tokens", Integer, nullable=False),
    Column("judge_tokens", Integer, nullable=False),
    Column("judge_reason", String(512)),
    Column("top_features", Text),
    Column("request", Text),
    Column("routed_answer", Text),
    Column("shadow_answer", Text),
    Index("shadow_samples_ts", "ts"),
)

_schema = Table(
    "usage_schema",
    metadata,
    Column("version", Integer, primary_key=True),
)


def _v1(conn: Connection) -> None:
    # The table as defined above, with its indexes. A later change of the table is a new migration
    # (ALTER TABLE ...) and a matching change of the definition above.
    usage_records.create(conn)


def _v2(conn: Connection) -> None:
    shadow_samples.create(conn)
    if conn.dialect.name == "postgresql":
        # Prompts and answers: no other role reads them, whatever default privileges granted it (the
        # compose stack's Grafana reader may SELECT every table the gateway creates, this one excepted).
        quote = conn.dialect.identifier_preparer.quote
        others = conn.execute(
            text(
                "SELECT DISTINCT grantee FROM information_schema.role_table_grants "
                "WHERE table_name = 'shadow_samples' AND grantee <> current_user"
            )
        ).scalars()
        for role in [*others, "PUBLIC"]:
            grantee = role if role == "PUBLIC" else quote(role)
            conn.execute(text(f"REVOKE ALL ON TABLE shadow_samples FROM {grantee}"))


# Append only: a released migration is never edited, a change of schema is a new entry.
MIGRATIONS: list[tuple[int, Callable[[Connection], None]]] = [(1, _v1), (2, _v2)]
SCHEMA_VERSION = MIGRATIONS[-1][0]

# An arbitrary, fixed key for pg_advisory_xact_lock: "usage" in ASCII.
_LOCK_KEY = 0x7573616765


def schema_version(conn: Connection) -> int:
    _schema.create(conn, checkfirst=True)
    current = conn.execute(select(_schema.c.version).order_by(_schema.c.version.desc())).first()
    return int(current[0]) if current is not None else 0


def migrate(conn: Connection) -> int:
    """Bring the schema to SCHEMA_VERSION inside the caller's transaction; returns the old version."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    current = schema_version(conn)
    if current > SCHEMA_VERSION:
        raise RuntimeError(
            f"the usage ledger's schema is version {current}, newer than this gateway's ({SCHEMA_VERSION})"
        )
    for version, step in MIGRATIONS:
        if version > current:
            step(conn)
            conn.execute(insert(_schema).values(version=version))
    return current
