"""Shadow samples in the usage database: on SQLite and PostgreSQL alike, cleaned as the ledger's rows are,
migrated from a ledger of the previous schema, and on PostgreSQL readable by the gateway's own role alone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from gateway.shadow.store import SampleRow, SampleStore
from gateway.usage.schema import MIGRATIONS, SCHEMA_VERSION, shadow_samples
from gateway.usage.store import UsageStore
from tests.postgres_support import PostgresServer, grafana_reader_database

ROOT = Path(__file__).resolve().parent.parent


def row(**fields: object) -> SampleRow:
    base = SampleRow(
        ts=time.time(),
        day="2026-11-26",
        request_id="r1",
        principal="alice",
        principal_kind="key",
        tier=None,
        api="chat",
        routed_to="diffusion",
        routed_kind="diffusion",
        shadow_backend="autoregressive",
        judge_backend="autoregressive",
        score=0.12,
        threshold=0.58,
        bucket="0.1",
        route="default:score=0.12",
        outcome="regret",
        verdict="diffusion_worse",
        discarded=None,
        shadow_seconds=0.5,
        judge_seconds=0.2,
        shadow_tokens=100,
        judge_tokens=300,
        judge_reason="A hedges",
        top_features="[]",
        request='{"messages": [{"role": "user", "content": "escrow?"}]}',
        routed_answer="Money. I might be wrong here.",
        shadow_answer="Money held by a third party.",
    )
    return base._replace(**fields)


def exercise(url: str) -> None:
    store = SampleStore(url)
    try:
        store.write(row())
        # What a client sent and a backend answered, as no store takes it: cleaned, never refused.
        store.write(
            row(
                request_id="r2",
                request='{"prompt": "nul \x00 and a lone \ud800 surrogate"}',
                routed_answer="x\x00y",
                principal="p" * 1000,
                score=float("nan"),
                shadow_tokens=2**40,
            )
        )
        first, second = store.samples(0.0)
        assert (first["outcome"], first["verdict"], first["bucket"]) == ("regret", "diffusion_worse", "0.1")
        assert second["routed_answer"] == "x\ufffdy" and "\ufffd surrogate" in second["request"]
        assert (
            len(second["principal"]) == 256
            and second["score"] == 0.0
            and second["shadow_tokens"] == 2**31 - 1
        )
        store.write(row(request_id="r3", request=None, verdict="same"))
        assert [s["request_id"] for s in store.samples(0.0, judged_with_content=True)] == ["r1", "r2"]
        assert store.expire(7, now=time.time() + 8 * 86400) == 3
    finally:
        store.dispose()


def test_sqlite_samples(tmp_path):
    exercise(f"sqlite:///{tmp_path / 'usage.db'}")


def test_a_ledger_of_the_previous_schema_gains_the_samples_table(tmp_path):
    url = f"sqlite:///{tmp_path / 'usage.db'}"
    old = UsageStore(url)
    with old.engine.begin() as conn:
        from gateway.usage.schema import _schema

        _schema.create(conn)
        MIGRATIONS[0][1](conn)  # version 1: the ledger's table alone
        conn.execute(_schema.insert().values(version=1))
    old.dispose()
    store = SampleStore(url)
    store.write(row())
    assert len(store.samples(0.0)) == 1
    store.dispose()
    check = UsageStore(url)
    with check.engine.connect() as conn:
        versions = conn.execute(text("SELECT version FROM usage_schema ORDER BY version")).scalars().all()
    check.dispose()
    assert versions == list(range(1, SCHEMA_VERSION + 1)) and SCHEMA_VERSION >= 2
    assert shadow_samples.name == "shadow_samples"


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    server = PostgresServer().start()
    yield server
    server.stop()


def test_postgres_samples(postgres):
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE samples")
    exercise(postgres.url.rsplit("/", 1)[0] + "/samples")


def test_grafanas_reader_reads_the_ledger_but_not_the_prompts(postgres):
    """deploy/postgres/initdb/10-grafana-reader.sh grants Grafana SELECT on every table the gateway
    creates: the samples' table, which holds prompts and answers, is taken back from it."""
    import psycopg

    store = SampleStore(grafana_reader_database(postgres))
    store.write(row())
    store.dispose()
    reader = f"postgresql://grafana:reader-secret@127.0.0.1:{postgres.port}/gateway"
    with psycopg.connect(reader) as conn:
        assert conn.execute("SELECT count(*) FROM usage_records").fetchone() == (0,)
    with psycopg.connect(reader) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT request FROM shadow_samples")
