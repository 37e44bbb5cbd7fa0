"""The ``usage:`` section: where the ledger lives and how writes to it are bounded."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

__all__ = ["UsageSettings", "engine_url"]

_PSYCOPG = "postgresql+psycopg"
_DRIVERS = {"sqlite": "sqlite", "postgresql": _PSYCOPG, _PSYCOPG: _PSYCOPG}


def engine_url(raw: str) -> URL:
    """The SQLAlchemy URL for a configured store: ``sqlite:///path`` or ``postgresql://user@host/db``
    (psycopg 3 is the only PostgreSQL driver the gateway ships with, so a bare ``postgresql`` means it)."""
    try:
        url = make_url(raw)
    except ArgumentError:
        raise ValueError("not a database URL: sqlite:///PATH or postgresql://USER@HOST/DB") from None
    driver = _DRIVERS.get(url.drivername)
    if driver is None:
        raise ValueError(f"unsupported database {url.drivername!r} (sqlite or postgresql)")
    if driver == "sqlite" and url.database in (None, "", ":memory:"):
        # An in-memory ledger would be one empty database per connection, and gone at exit.
        raise ValueError("sqlite needs a file: sqlite:///usage.db or sqlite:////var/lib/gateway/usage.db")
    return url.set(drivername=driver)


class UsageSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    # A secret: a PostgreSQL URL may hold a password (GATEWAY_USAGE__URL in the environment).
    # A relative SQLite path is relative to the configuration file's directory (set there), else to the
    # working directory.
    url: SecretStr = SecretStr("sqlite:///usage.db")
    # Rows older than this are deleted (hourly, by the writer); None keeps them for ever.
    retention_days: int | None = Field(90, ge=1)
    # Records waiting for the store, at most; past it new records are dropped and counted
    # (gateway_usage_records_dropped_total): the request path never waits for the database.
    queue_size: int = Field(10_000, ge=1, le=10_000_000)
    batch_size: int = Field(500, ge=1, le=100_000)
    # Seconds: the longest a record waits before its batch is written.
    flush_interval: float = Field(1.0, gt=0, le=60)
    # Seconds a clean shutdown may spend writing what is still queued.
    shutdown_timeout: float = Field(10.0, gt=0, le=600)
    # Seconds to open a connection to PostgreSQL (SQLite: to wait for another process's write lock).
    connect_timeout: float = Field(5.0, gt=0, le=120)
    # Seconds one write of a batch may take: PostgreSQL's statement and lock timeout for the ledger's
    # writes; a server that does not answer at all has the ledger's connections closed after twice this.
    # Either way the batch is dropped and counted (reason timeout), and a warning names its size.
    write_timeout: float = Field(10.0, gt=0, le=600)
    # Seconds after which a write still running is logged as slow (a warning with the batch size).
    slow_write: float = Field(2.0, gt=0, le=600)

    @field_validator("url")
    @classmethod
    def _known_store(cls, value: SecretStr) -> SecretStr:
        engine_url(value.get_secret_value())
        return value
