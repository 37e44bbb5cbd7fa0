"""The usage ledger (issue 19): a row per finished request, streamed or not, failed too; writes off the
request path, bounded and counted when the store is down; flushed on shutdown; read back by the API and
the CLI; the same store code against SQLite and a real PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, text

from gateway.cli import main
from gateway.config import ConfigError, load_settings
from gateway.record import RequestRecord
from gateway.usage.query import UsageQuery, parse_since, summarize
from gateway.usage.records import UsageRecord, from_request
from gateway.usage.schema import SCHEMA_VERSION, usage_records
from gateway.usage.store import UsageStore
from gateway.usage.writer import UsageWriter
from tests.postgres_support import PostgresServer
from tests.support import AR_MODEL, wait_for, write_key

CHAT = [{"role": "user", "content": "Hi! How was your weekend?"}]
# A code fence: routed by the structural rule (hard:code), whatever the difficulty scorer says.
CODE = [{"role": "user", "content": "Why does this fail?\n```python\nprint(sorted(a) + b)\n```"}]


def post(gw, body, headers=None, key=None, path="/chat/completions"):
    h = {"authorization": f"Bearer {key or gw.key}", **(headers or {})}
    return httpx.post(gw.base_url + path, json=body, headers=h, timeout=10)


def rows(url: str) -> list[dict[str, Any]]:
    store = UsageStore(url)
    try:
        with store.engine.connect() as conn:
            return [
                dict(r) for r in conn.execute(select(usage_records).order_by(usage_records.c.id)).mappings()
            ]
    finally:
        store.dispose()


def record(**fields: Any) -> UsageRecord:
    base: dict[str, Any] = {
        "ts": time.time(),
        "day": time.strftime("%Y-%m-%d", time.gmtime()),
        "request_id": "r1",
        "principal": "alice",
        "principal_kind": "key",
        "tier": None,
        "api": "chat",
        "model": "auto",
        "backend": "diffusion",
        "route": "default",
        "fallback": None,
        "stream": False,
        "status": 200,
        "outcome": "ok",
        "error_code": None,
        "prompt_tokens": 10,
        "completion_tokens": 20,
        "reasoning_tokens": 0,
        "ttfb_ms": 12.5,
        "duration_ms": 30.0,
        "backend_seconds": 0.5,
        "sampler": "entropy_bound",
        "canvas_fill": 0.25,
    }
    base.update(fields)
    return UsageRecord(**base)


# ---- end to end through a gateway --------------------------------------------------------------------------


def test_every_finished_request_is_one_row_and_a_clean_shutdown_writes_them_all(make_gateway, tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    # A flush interval far beyond the test: only the shutdown flush can write these rows.
    gw = make_gateway(usage={"url": url, "flush_interval": 60, "batch_size": 1000})
    unary = post(gw, {"model": "auto", "messages": CHAT})
    streamed = post(gw, {"model": "auto", "messages": CODE, "stream": True})
    fallback = post(gw, {"model": "auto", "messages": CHAT}, {"x-sim-fault-diffusion": "status=500"})
    pinned = post(gw, {"model": AR_MODEL, "prompt": "Once upon", "max_tokens": 5}, path="/completions")
    refused = post(gw, {"model": "auto", "messages": CHAT}, key="gw-not-a-key")
    assert [r.status_code for r in (unary, streamed, fallback, pinned, refused)] == [200, 200, 200, 200, 401]
    assert rows(url) == []  # nothing written yet: batched, off the request path
    gw.server.__exit__()
    ledger = rows(url)
    assert len(ledger) == 5
    by_id = {r["request_id"]: r for r in ledger}

    first = by_id[unary.headers["x-request-id"]]
    usage = unary.json()["usage"]
    assert first["principal"] == "alice" and first["principal_kind"] == "key"
    assert (first["api"], first["model"], first["backend"]) == ("chat", "auto", "diffusion")
    assert (first["status"], first["outcome"], first["stream"]) == (200, "ok", False)
    assert (first["prompt_tokens"], first["completion_tokens"]) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
    assert first["sampler"] == "entropy_bound"
    assert first["canvas_fill"] == pytest.approx(usage["completion_tokens"] / 256, abs=1e-4)
    assert first["backend_seconds"] > 0 and first["ttfb_ms"] > 0
    assert first["backend_seconds"] * 1000 <= first["duration_ms"]

    code = by_id[streamed.headers["x-request-id"]]
    assert code["backend"] == "autoregressive" and code["stream"] is True and "hard:code" in code["route"]
    assert code["completion_tokens"] > 0 and code["sampler"] is None and code["canvas_fill"] is None
    assert code["backend_seconds"] > 0

    switched = by_id[fallback.headers["x-request-id"]]
    assert switched["backend"] == "autoregressive"
    assert switched["fallback"] == "diffusion>autoregressive:status_500"

    completion = by_id[pinned.headers["x-request-id"]]
    assert (completion["api"], completion["model"]) == ("completions", AR_MODEL)

    failed = by_id[refused.headers["x-request-id"]]
    assert failed["principal"] is None and failed["status"] == 401 and failed["outcome"] == "auth_error"
    assert failed["backend"] is None and failed["backend_seconds"] == 0


def test_a_store_that_is_down_costs_requests_nothing_and_drops_are_counted(make_gateway, tmp_path):
    # A database in a directory that does not exist yet: every write fails until it is created.
    where = tmp_path / "later"
    url = f"sqlite:///{where / 'usage.db'}"
    gw = make_gateway(usage={"url": url, "queue_size": 3, "batch_size": 1, "flush_interval": 0.01})
    statuses = [post(gw, {"model": "auto", "messages": CHAT}).status_code for _ in range(10)]
    assert statuses == [200] * 10
    # At most the queue (3) and the batch being retried (1) wait; the rest are dropped and counted.
    assert wait_for(lambda: gw.metric("gateway_usage_records_dropped_total") >= 6)
    dropped = gw.metric("gateway_usage_records_dropped_total")
    assert dropped <= 10
    metrics = gw.scrape()
    assert f'gateway_usage_records_dropped_total{{reason="queue_full"}} {dropped}' in metrics
    assert 'gateway_usage_records_dropped_total{reason="shutdown"} 0.0' in metrics
    # The store comes back: what was still queued is written, nothing more is lost.
    where.mkdir()
    assert wait_for(lambda: gw.metric("gateway_usage_records_written_total") == 10 - dropped, within=30)
    post(gw, {"model": "auto", "messages": CHAT})
    gw.server.__exit__()
    assert len(rows(url)) == 11 - dropped
    assert gw.metric("gateway_usage_records_dropped_total") == dropped
    assert gw.metric("gateway_usage_records_written_total", store="sqlite") == 11 - dropped


def test_usage_api_admin_sees_all_keys_others_only_their_own(make_gateway, tmp_path):
    keys_file = tmp_path / "keys.yaml"
    alice = write_key(keys_file, "alice")
    bob = write_key(keys_file, "bob")
    root = write_key(keys_file, "ops", admin=True)
    gw = make_gateway(
        auth={"keys_file": str(keys_file)}, usage={"flush_interval": 0.02}, routing={"health_interval": 60}
    )
    for key in (alice, alice, bob):
        assert post(gw, {"model": "auto", "messages": CHAT}, key=key).status_code == 200

    def get(credential: str, **params: str) -> httpx.Response:
        return httpx.get(
            gw.base_url + "/gateway/usage", params=params, headers={"authorization": f"Bearer {credential}"}
        )

    assert wait_for(lambda: sum(r["requests"] for r in get(root).json()["data"]) == 3)
    everyone = get(root, by="key").json()
    assert everyone["scope"] == "all"
    assert {r["key"]: r["requests"] for r in everyone["data"]} == {"alice": 2, "bob": 1}
    # Not backend_seconds > 0: the API gives the sum in milliseconds, and one simulated answer can take
    # under half a millisecond (0.0 on a fast machine: a wall-time assertion). The ledger's own seconds
    # are checked above, the sums with fixed values in exercise_store (the sqlite and postgres tests).
    assert all(r["completion_tokens"] > 0 and r["backend_seconds"] >= 0 for r in everyone["data"])
    assert [r["key"] for r in get(root, key="bob").json()["data"]] == ["bob"]

    own = get(bob, by="backend").json()
    assert (
        own["scope"] == "own" and own["data"][0]["requests"] == 1 and own["data"][0]["backend"] == "diffusion"
    )
    denied = get(bob, key="alice")
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "usage_not_allowed"
    assert get(alice, key="alice").json()["data"][0]["requests"] == 2
    for params, param in (
        ({"since": "yesterday"}, "since"),
        ({"by": "colour"}, "by"),
        ({"limit": "0"}, "limit"),
    ):
        bad = get(alice, **params)
        assert bad.status_code == 400 and bad.json()["error"]["param"] == param, bad.text
    assert get("gw-nope").status_code == 401


def test_usage_api_says_when_the_ledger_is_off(make_gateway):
    gw = make_gateway(usage={"enabled": False})
    r = httpx.get(gw.base_url + "/gateway/usage", headers={"authorization": f"Bearer {gw.key}"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "usage_disabled"


# ---- the store, the writer, the CLI ------------------------------------------------------------------------


def exercise_store(url: str) -> None:
    """The same checks on SQLite and PostgreSQL: migrations, writes, grouping, filtering, retention."""
    store = UsageStore(url)
    try:
        store.migrate()
        store._migrated = False
        store.migrate()  # a second run finds the schema current
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT max(version) FROM usage_schema")).scalar() == SCHEMA_VERSION
        now = time.time()
        store.write(
            [
                record(principal="alice", backend_seconds=1.5, completion_tokens=100),
                record(principal="alice", backend="autoregressive", backend_seconds=0.5, sampler=None),
                record(principal="bob", backend_seconds=4.0, outcome="upstream_status", status=502),
                record(principal="bob", principal_kind="jwt", backend_seconds=1.0),
                record(principal="carol", ts=now - 40 * 86400, day="2000-01-01", backend_seconds=9.0),
                record(principal="x" * 256, model="m" * 256, route="r" * 1024),
            ]
        )
        week = UsageQuery(since=now - 7 * 86400, by="key")
        by_key = summarize(store, week)
        assert [r["key"] for r in by_key][:2] == ["bob", "alice"]  # most backend time first
        bob = by_key[0]
        assert (bob["requests"], bob["errors"], bob["backend_seconds"]) == (2, 1, 5.0)
        by_backend = {
            r["backend"]: r for r in summarize(store, UsageQuery(since=now - 7 * 86400, by="backend"))
        }
        assert by_backend["autoregressive"]["requests"] == 1 and by_backend["diffusion"]["requests"] == 4
        only_key = summarize(
            store, UsageQuery(since=now - 86400, by="day", principal="bob", principal_kind="key")
        )
        assert len(only_key) == 1 and only_key[0]["requests"] == 1
        assert len(summarize(store, UsageQuery(since=now - 60 * 86400, by="key"))) == 4  # carol too
        assert store.expire(30) == 1
        assert "carol" not in [r["key"] for r in summarize(store, UsageQuery(since=0, by="key"))]
    finally:
        store.dispose()


def test_sqlite_store(tmp_path):
    exercise_store(f"sqlite:///{tmp_path / 'usage.db'}")
    with sqlite3.connect(tmp_path / "usage.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.fixture(scope="module")
def postgres():
    server = PostgresServer().start()
    yield server
    server.stop()


def test_postgres_store(postgres):
    exercise_store(postgres.url)


def test_a_gateway_writes_its_ledger_to_postgres(make_gateway, postgres):
    url = postgres.url.rsplit("/", 1)[0] + "/gateway_e2e"
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE gateway_e2e")
    gw = make_gateway(usage={"url": url, "flush_interval": 0.02})
    assert post(gw, {"model": "auto", "messages": CHAT, "stream": True}).status_code == 200
    assert wait_for(lambda: gw.metric("gateway_usage_records_written_total") == 1)
    gw.server.__exit__()
    [row] = rows(url)
    assert row["principal"] == "alice" and row["stream"] is True and row["completion_tokens"] > 0


def test_a_newer_schema_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'usage.db'}"
    store = UsageStore(url)
    store.migrate()
    with store.engine.begin() as conn:
        conn.execute(text("INSERT INTO usage_schema (version) VALUES (:v)"), {"v": SCHEMA_VERSION + 1})
    fresh = UsageStore(url)
    with pytest.raises(RuntimeError, match="newer"):
        fresh.migrate()
    store.dispose()
    fresh.dispose()


def test_a_rows_day_is_its_utc_day_on_either_side_of_midnight():
    request = RequestRecord(request_id="r", method="POST", path="/v1/chat/completions", started=0.0)
    request.api = "chat"

    def day(now: float) -> str:
        return from_request(request, 1.0, now=now).day

    assert day(86_399.9) == "1970-01-01"
    assert day(86_400.0) == "1970-01-02"
    assert day(86_399.9) == "1970-01-01"  # back: not the day seen last
    midnight = datetime(2026, 11, 26, tzinfo=UTC).timestamp()
    assert [day(midnight - 0.001), day(midnight), day(midnight + 86_399.999)] == [
        "2026-11-25",
        "2026-11-26",
        "2026-11-26",
    ]
    assert from_request(request, 1.0, now=midnight) == from_request(request, 1.0, now=midnight)


def test_writer_batches_and_flushes_on_close(tmp_path):
    store = UsageStore(f"sqlite:///{tmp_path / 'usage.db'}")
    writes: list[int] = []
    original = store.write

    def counting(batch):
        writes.append(len(batch))
        original(batch)

    store.write = counting  # type: ignore[method-assign]
    writer = UsageWriter(store, queue_size=100, batch_size=4, flush_interval=60)
    for i in range(10):  # queued before the thread starts: the batches below do not depend on timing
        writer.submit(record(request_id=f"r{i}"))
    writer.start()
    # Two full batches are written at once; the last two wait for the flush interval, or for close.
    assert wait_for(lambda: sum(writes) == 8)
    time.sleep(0.2)
    assert writes == [4, 4]
    writer.close(timeout=5)
    assert writes == [4, 4, 2] and writer.dropped == 0
    writer.submit(record())  # after close: dropped and counted, never queued for nobody
    assert writer.dropped == 1


def test_cli_usage_reads_the_ledger(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'usage.db'}"
    store = UsageStore(url)
    store.write([record(principal="alice"), record(principal="bob", backend_seconds=2.0)])
    store.dispose()
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "backends:\n  - {name: a, kind: autoregressive, url: 'http://127.0.0.1:9', model: m}\n"
        f"usage:\n  url: '{url}'\n"
    )
    assert main(["usage", "--config", str(config), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["key"] for r in data] == ["bob", "alice"]
    assert (
        main(["usage", "--config", str(config), "--key", "alice", "--by", "backend", "--format", "csv"]) == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("backend,requests,") and out[1].startswith("diffusion,1,")
    assert main(["usage", "--config", str(config), "--since", "2d", "--by", "day"]) == 0
    table = capsys.readouterr().out
    assert time.strftime("%Y-%m-%d", time.gmtime()) in table and "BACKEND_SECONDS" in table
    assert main(["usage", "--config", str(config), "--since", "soon"]) == 2
    assert "since" in capsys.readouterr().err


def test_settings_refuse_an_unknown_store_and_hide_the_password(tmp_path):
    with pytest.raises(ConfigError, match=r"usage\.url"):
        load_settings(
            environ={},
            backends=[{"name": "a", "kind": "autoregressive", "url": "http://127.0.0.1:9", "model": "m"}],
            usage={"url": "mysql://root@db/usage"},
        )
    settings = load_settings(
        environ={"GATEWAY_USAGE__URL": "postgresql://gw:hunter2@db/usage"},
        backends=[{"name": "a", "kind": "autoregressive", "url": "http://127.0.0.1:9", "model": "m"}],
    )
    assert "hunter2" not in str(settings.model_dump(mode="json"))
    assert UsageStore(settings.usage.url.get_secret_value()).where == "postgresql+psycopg://gw:***@db/usage"


def test_since_accepts_durations_and_dates():
    assert parse_since("7d", now=1_000_000.0) == 1_000_000.0 - 7 * 86400
    assert parse_since("2026-01-01", now=0) == 1767225600.0
    with pytest.raises(ValueError):
        parse_since("99999999d")


def test_the_dashboards_top_keys_table_runs_on_a_postgres_ledger(postgres):
    """The Grafana table reads the ledger with SQL: run its query, Grafana's time macro expanded."""
    root = Path(__file__).resolve().parent.parent
    dashboard = json.loads((root / "deploy/grafana/dashboards/diffusion-gateway.json").read_text())
    [panel] = [p for p in dashboard["panels"] if p["datasource"]["uid"] == "usage-ledger"]
    sql = panel["targets"][0]["rawSql"]
    now = time.time()
    url = postgres.url.rsplit("/", 1)[0] + "/dashboard"
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE dashboard")
    store = UsageStore(url)
    store.write(
        [
            record(principal="alice", backend_seconds=1.0),
            record(principal="bob", backend_seconds=3.0),
            record(principal="bob", backend_seconds=2.0, outcome="upstream_timeout"),
            record(principal=None, backend_seconds=0.0, status=401, outcome="auth_error"),
            record(principal="carol", backend_seconds=50.0, ts=now - 7200),  # outside the range
        ]
    )
    store.dispose()
    # $__unixEpochFilter(ts) is Grafana's "ts BETWEEN <from> AND <to>" in Unix seconds.
    expanded = sql.replace("$__unixEpochFilter(ts)", f"ts BETWEEN {now - 3600} AND {now + 60}")
    with psycopg.connect(url) as conn:
        table = conn.execute(expanded).fetchall()
    assert [(key, requests, seconds, errors) for key, requests, seconds, _, _, errors in table] == [
        ("bob", 2, 5.0, 1),
        ("alice", 1, 1.0, 0),
        ("(unauthenticated)", 1, 0.0, 1),
    ]


def test_a_relative_sqlite_path_in_the_file_is_relative_to_the_file(tmp_path):
    config = tmp_path / "conf" / "gateway.yaml"
    config.parent.mkdir()
    config.write_text(
        "backends:\n  - {name: a, kind: autoregressive, url: 'http://127.0.0.1:9', model: m}\n"
        "usage:\n  url: sqlite:///data/usage.db\n"
    )
    settings = load_settings(config, environ={})
    assert settings.usage.url.get_secret_value() == f"sqlite:///{tmp_path / 'conf' / 'data' / 'usage.db'}"


def test_cli_usage_without_a_configuration_reads_the_ledger_url_from_the_environment(
    tmp_path, capsys, monkeypatch
):
    url = f"sqlite:///{tmp_path / 'env.db'}"
    store = UsageStore(url)
    store.write([record(principal="dana")])
    store.dispose()
    monkeypatch.delenv("GATEWAY_CONFIG", raising=False)
    monkeypatch.setenv("GATEWAY_USAGE__URL", url)
    assert main(["usage", "--format", "json"]) == 0
    assert [r["key"] for r in json.loads(capsys.readouterr().out)] == ["dana"]


def test_a_client_that_hangs_up_still_gets_its_row(make_gateway, tmp_path):
    url = f"sqlite:///{tmp_path / 'gone.db'}"
    gw = make_gateway(usage={"url": url, "flush_interval": 0.02})
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            gw.base_url + "/chat/completions",
            json={"model": "auto", "messages": CHAT},
            headers={"authorization": f"Bearer {gw.key}", "x-sim-fault": "stall_after=0"},
            timeout=0.3,
        )
    assert wait_for(lambda: gw.metric("gateway_usage_records_written_total") == 1)
    [row] = rows(url)
    assert (row["outcome"], row["status"], row["backend"]) == ("disconnected", 499, "diffusion")
    # The backend worked on it until the gateway closed the upstream request.
    assert row["backend_seconds"] > 0 and row["completion_tokens"] == 0


def test_the_compose_init_script_gives_grafana_a_read_only_role(postgres):
    """deploy/postgres/initdb/10-grafana-reader.sh, run as the postgres image runs it, against a real
    server: Grafana's role reads the tables the gateway creates later, and may change nothing."""
    import os
    import subprocess

    import psycopg

    root = Path(__file__).resolve().parent.parent
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE gateway")
    env = {
        **os.environ,
        "POSTGRES_USER": "gateway",
        "POSTGRES_DB": "gateway",
        "LEDGER_GRAFANA_PASSWORD": "reader-secret",
        "PGHOST": "127.0.0.1",
        "PGPORT": str(postgres.port),
        "PATH": f"{postgres.bindir}:{os.environ['PATH']}",
    }
    script = root / "deploy" / "postgres" / "initdb" / "10-grafana-reader.sh"
    result = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    ledger = postgres.url.rsplit("/", 1)[0] + "/gateway"
    store = UsageStore(ledger)
    store.write([record(principal="alice")])
    store.dispose()
    reader = f"postgresql://grafana:reader-secret@127.0.0.1:{postgres.port}/gateway"
    with psycopg.connect(reader) as conn:
        assert conn.execute("SELECT principal FROM usage_records").fetchall() == [("alice",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM usage_records")
