"""The ledger's database, through SQLAlchemy Core 2: one code path for SQLite (the standard library's
sqlite3) and PostgreSQL (psycopg 3).

SQLAlchemy rather than two hand-written drivers: it gives a connection pool with pre-ping (a restarted
PostgreSQL is reconnected to, not an error for ever), one dialect-neutral query builder for the reads
(group by, sums, filters) and parameter binding everywhere. Every call here is blocking: the writer runs
it in its own thread, the API in a worker thread, the CLI directly.
"""

from __future__ import annotations

import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, delete, event, select
from sqlalchemy.engine import URL
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from gateway.usage.records import UsageRecord, storable
from gateway.usage.schema import migrate, usage_records
from gateway.usage.settings import engine_url

__all__ = ["UsageStore", "timed_out", "transient"]

log = logging.getLogger("gateway.usage")

_COLUMNS = UsageRecord._fields
# PostgreSQL's query_canceled (statement_timeout) and lock_not_available (lock_timeout).
_TIMEOUT_STATES = frozenset({"57014", "55P03"})


class UsageStore:
    def __init__(
        self, url: str | URL, *, connect_timeout: float = 5.0, write_timeout: float | None = None
    ) -> None:
        """``write_timeout``: PostgreSQL's statement and lock timeout for the ledger's writes (its reads
        have none), so that a locked table or a slow disk ends a write instead of holding the writer."""
        self.url = engine_url(url) if isinstance(url, str) else url
        self.engine = _engine(self.url, connect_timeout)
        self._migrated = False
        self._postgres = self.url.get_backend_name() == "postgresql"
        self._write_timeout_ms = str(max(1, round(write_timeout * 1000))) if write_timeout else None
        # Every open connection, for abort(): a PostgreSQL connection's own duplicate of its socket (the
        # descriptor stays ours until the connection closes, so a shutdown can never reach a descriptor
        # number that was reused meanwhile), a SQLite connection itself.
        self._open: dict[int, Any] = {}
        self._open_lock = threading.Lock()
        event.listen(self.engine, "connect", self._opened)
        event.listen(self.engine, "close", self._closed)
        event.listen(self.engine, "close_detached", self._closed)
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
        # dict per row costs five times as much (bench/tracing_overhead.py counts the writer
        # thread's CPU).
        rows = [storable(r) for r in records]
        with self.engine.begin() as conn:
            self._bound(conn)
            conn.exec_driver_sql(self._insert, rows)

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction on the migrated schema, bounded as the ledger's writes are (PostgreSQL's
        statement and lock timeouts): for the other tables of the usage database (gateway/shadow/store.py)."""
        self.migrate()
        with self.engine.begin() as conn:
            self._bound(conn)
            yield conn

    def write_each(self, records: Sequence[UsageRecord]) -> int:
        """Write the rows one by one, each under its own savepoint in one transaction, after the store
        refused them as a batch: a row it refuses again costs that row only, not its batch. Returns how
        many were refused; a transient failure (see :func:`transient`) raises, and nothing is written."""
        self.migrate()
        refused = 0
        with self.engine.begin() as conn:
            self._bound(conn)
            for record in records:
                try:
                    with conn.begin_nested():
                        conn.exec_driver_sql(self._insert, storable(record))
                except Exception as exc:
                    if transient(exc):
                        raise
                    refused += 1
        return refused

    def expire(self, retention_days: int, *, now: float | None = None, limit: int | None = None) -> int:
        """Delete rows older than the retention, at most ``limit`` of them (the oldest first) when given;
        returns how many went. The writer deletes in such chunks: each is one short transaction within
        the write timeout, however many rows a first clean-up of an old ledger finds."""
        self.migrate()
        cutoff = (time.time() if now is None else now) - retention_days * 86400
        t = usage_records.c
        stmt = delete(usage_records).where(t.ts < cutoff)
        if limit is not None:
            oldest = select(t.id).where(t.ts < cutoff).order_by(t.ts).limit(limit)
            stmt = delete(usage_records).where(t.id.in_(oldest.scalar_subquery()))
        with self.engine.begin() as conn:
            self._bound(conn)
            return int(conn.execute(stmt).rowcount)

    def dispose(self) -> None:
        self.engine.dispose()

    def abort(self) -> int:
        """End whatever this store's connections are waiting for, from any thread: each PostgreSQL
        connection's socket is shut down (its call then fails as a lost connection, and the pool replaces
        it), each SQLite connection interrupted. For a server that stopped answering altogether (frozen,
        paused), where no statement timeout can fire: only the client can end the wait. Returns how many
        connections it reached."""
        with self._open_lock:
            targets = list(self._open.values())
            for target in targets:
                try:
                    if isinstance(target, int):
                        # fromfd duplicates the descriptor again: closing that copy leaves ours open.
                        with socket.fromfd(target, socket.AF_INET, socket.SOCK_STREAM) as sock:
                            sock.shutdown(socket.SHUT_RDWR)
                    else:
                        target.interrupt()
                except Exception:  # noqa: S112  # already closed, or never connected: nothing waits on it
                    continue
        return len(targets)

    def _bound(self, conn: Connection) -> None:
        """Within this transaction: PostgreSQL's statement and lock timeouts for a write."""
        if self._postgres and self._write_timeout_ms is not None:
            conn.exec_driver_sql(
                "SELECT set_config('statement_timeout', %s, true), set_config('lock_timeout', %s, true)",
                (self._write_timeout_ms, self._write_timeout_ms),
            )

    def _opened(self, dbapi_connection: Any, record: Any) -> None:
        target: Any = dbapi_connection
        if self._postgres:
            target = os.dup(dbapi_connection.pgconn.socket)
        with self._open_lock:
            self._open[id(dbapi_connection)] = target

    def _closed(self, dbapi_connection: Any, record: Any = None) -> None:
        with self._open_lock:
            target = self._open.pop(id(dbapi_connection), None)
        if isinstance(target, int):
            os.close(target)


def _engine(url: URL, connect_timeout: float) -> Engine:
    if url.get_backend_name() == "sqlite":
        # timeout: how long a writer waits for another process's lock (several workers share the file).
        engine = create_engine(url, connect_args={"timeout": connect_timeout})
        path = url.database or ""

        @event.listens_for(engine, "do_connect")
        def _private(*_: Any) -> None:
            _private_file(path)

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


def _private_file(path: str) -> None:
    """Create the ledger's file readable and writable by its owner only, before SQLite opens it: SQLite
    gives the -wal and -shm files it creates beside it the same mode. (sqlite3 would create it with
    0666 less the umask: 0644, every local user able to read who used what.) An existing file keeps the
    mode it has, an operator's choice; one that others may read is reported."""
    if not path or path.startswith("file:"):
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            return
        if mode & 0o077 and path not in _REPORTED:
            _REPORTED.add(path)
            log.warning("usage ledger: %s is readable by other users (mode %04o); chmod 600 it", path, mode)
        return
    except OSError:
        return  # a missing or read-only directory: sqlite3's own error says so, and the writer retries
    os.close(fd)


# Files already reported as readable by others: one warning each, not one a connection.
_REPORTED: set[str] = set()


def timed_out(exc: BaseException) -> bool:
    """PostgreSQL ended a write at its statement or lock timeout."""
    return getattr(getattr(exc, "orig", None), "sqlstate", None) in _TIMEOUT_STATES


def transient(exc: BaseException) -> bool:
    """A connection, lock or pool problem, worth a retry of the same rows; anything else is the store
    refusing the rows themselves (a constraint, a type, a value its driver cannot encode)."""
    return isinstance(exc, OperationalError | InterfaceError | DisconnectionError | PoolTimeout | OSError)
