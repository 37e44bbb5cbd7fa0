"""The ledger's database, through SQLAlchemy Core 2: one code path for SQLite (the standard library's
sqlite3) and PostgreSQL (psycopg 3).

SQLAlchemy rather than two hand-written drivers: it gives a connection pool with pre-ping (a restarted
PostgreSQL is reconnected to, not an error for ever), one dialect-neutral query builder for the reads
(group by, sums, filters) and parameter binding everywhere. Every call here is blocking: the writer runs
it in its own thread, the API in a worker thread, the CLI directly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, delete, event
from sqlalchemy.engine import URL
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from gateway.usage.records import UsageRecord, storable
from gateway.usage.schema import migrate, usage_records
from gateway.usage.settings import engine_url

__all__ = ["UsageStore", "transient"]

_COLUMNS = UsageRecord._fields


class UsageStore:
    def __init__(self, url: str | URL, *, connect_timeout: float = 5.0) -> None:
        self.url = engine_url(url) if isinstance(url, str) else url
        self.engine = _engine(self.url, connect_timeout)
        self._migrated = False
        marker = "?" if self.url.get_backend_name() == "sqlite" else "%s"  # the drivers' paramstyles
        # Only constant identifiers are formatted in (the table's and UsageRecord's field names); every
        # value is a bound parameter.
        self._insert = (
            f"INSERT INTO {usage_records.name} ({', '.join(_COLUMNS)}) "  # noqa: S608
            f"VALUES ({', '.join([marker] * len(_COLUMNS))})"
        )

    @property
    def where(self) -> str:
        """The URL without its password, for messages and logs."""
        return self.url.render_as_string(hide_password=True)

    def migrate(self) -> None:
        if self._migrated:
            return
        with self.engine.connect() as conn:
            # SQLite: BEGIN IMMEDIATE takes the write lock first, so that two processes sharing the file
            # migrate one after the other (its DDL otherwise runs outside any transaction).
            conn.info["immediate"] = True
            try:
                with conn.begin():
                    migrate(conn)
            finally:
                conn.info.pop("immediate", None)
        self._migrated = True

    def write(self, records: Sequence[UsageRecord]) -> None:
        if not records:
            return
        self.migrate()
        # The driver's executemany with plain tuples (a UsageRecord is one): SQLAlchemy's insert() with a
        # dict per row cost 34 µs a row here, this 7 (bench/tracing_overhead.py counts the writer
        # thread's CPU).
        rows = [storable(r) for r in records]
        with self.engine.begin() as conn:
            conn.exec_driver_sql(self._insert, rows)

    def write_each(self, records: Sequence[UsageRecord]) -> int:
        """Write the rows one by one, each under its own savepoint in one transaction, after the store
        refused them as a batch: a row it refuses again costs that row only, not its batch. Returns how
        many were refused; a transient failure (see :func:`transient`) raises, and nothing is written."""
        self.migrate()
        refused = 0
        with self.engine.begin() as conn:
            for record in records:
                try:
                    with conn.begin_nested():
                        conn.exec_driver_sql(self._insert, storable(record))
                except Exception as exc:
                    if transient(exc):
                        raise
                    refused += 1
        return refused

    def expire(self, retention_days: int, *, now: float | None = None) -> int:
        """Delete rows older than the retention; returns how many went."""
        self.migrate()
        cutoff = (time.time() if now is None else now) - retention_days * 86400
        with self.engine.begin() as conn:
            return int(conn.execute(delete(usage_records).where(usage_records.c.ts < cutoff)).rowcount)

    def dispose(self) -> None:
        self.engine.dispose()


def _engine(url: URL, connect_timeout: float) -> Engine:
    if url.get_backend_name() == "sqlite":
        # timeout: how long a writer waits for another process's lock (several workers share the file).
        engine = create_engine(url, connect_args={"timeout": connect_timeout})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            # SQLAlchemy emits BEGIN itself (below): sqlite3's own transaction handling skips DDL.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            # WAL: readers (gateway usage, the API) never block the writer, nor it them.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.info.get("immediate") else "BEGIN")

        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=2,
        max_overflow=2,
        connect_args={"connect_timeout": max(1, round(connect_timeout))},
    )


def transient(exc: BaseException) -> bool:
    """A connection, lock or pool problem, worth a retry of the same rows; anything else is the store
    refusing the rows themselves (a constraint, a type, a value its driver cannot encode)."""
    return isinstance(exc, OperationalError | InterfaceError | DisconnectionError | PoolTimeout | OSError)
