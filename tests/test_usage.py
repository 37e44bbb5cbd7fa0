"""The usage ledger: a row per finished request, streamed or not, failed too; writes off the
request path, bounded and counted when the store is down; flushed on shutdown; read back by the API and
the CLI; the same store code against SQLite and a real PostgreSQL."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
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
from tests.postgres_support import PostgresServer, grafana_reader_database
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
    assert [r.status_code for r in (unary, streamed, fallback, pinned)] == [200, 200, 200, 200]
    assert rows(url) == []  # nothing written yet: batched, off the request path
    gw.server.__exit__()
    ledger = rows(url)
    assert len(ledger) == 4
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


def test_a_refused_credential_is_counted_not_a_ledger_row_and_authenticated_rejections_keep_theirs(
    make_gateway, tmp_path
):
    """401s (no key, a wrong key, a malformed header, a bad token) cost the ledger nothing: otherwise any
    client without a key fills it, a row a request. A known caller's 403 and 429 are still rows."""
    import jwt

    secret = "0123456789abcdef0123456789abcdef-usage-401"
    keys_file = tmp_path / "keys.yaml"
    alice = write_key(keys_file, "alice")
    narrow = write_key(keys_file, "narrow", models=["nothing-by-this-name"])
    slow = write_key(keys_file, "slow", limits={"requests_per_minute": 1})
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    gw = make_gateway(
        auth={
            "keys_file": str(keys_file),
            "jwt": {"issuer": "i", "audience": "a", "algorithms": ["HS256"], "secret": secret},
        },
        usage={"url": url, "flush_interval": 60},
    )
    expired = jwt.encode(
        {"iss": "i", "aud": "a", "sub": "bot", "exp": int(time.time()) - 60}, secret, "HS256"
    )
    body = {"model": "auto", "messages": CHAT}
    refused = [
        httpx.post(gw.base_url + "/chat/completions", json=body, timeout=10),
        post(gw, body, key="gw-not-a-key"),
        post(gw, body, key=expired),
        post(gw, body, headers={"authorization": "Basic abc"}),
        post(gw, {"model": "auto", "input": "hi"}, key="gw-not-a-key", path="/responses"),
    ]
    assert [r.status_code for r in refused] == [401] * 5
    assert post(gw, body, key=alice).status_code == 200
    denied = post(gw, body, key=narrow)
    assert denied.status_code == 403
    assert post(gw, body, key=slow).status_code == 200
    limited = post(gw, body, key=slow)
    assert limited.status_code == 429
    gw.server.__exit__()
    ledger = {r["request_id"]: r for r in rows(url)}
    assert not {r.headers["x-request-id"] for r in refused} & set(ledger)
    assert sorted((r["principal"], r["status"]) for r in ledger.values()) == [
        ("alice", 200),
        ("narrow", 403),
        ("slow", 200),
        ("slow", 429),
    ]
    assert ledger[denied.headers["x-request-id"]]["outcome"] == "auth_error"
    assert ledger[limited.headers["x-request-id"]]["outcome"] == "rate_limited"
    for reason, count in (("missing", 1), ("invalid", 2), ("expired", 1), ("malformed", 1)):
        assert gw.metric("gateway_auth_failures_total", reason=reason) == count, reason
    assert gw.metric("gateway_requests_total", outcome="auth_error") == 6  # five 401s and the 403


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


def test_usage_reports_keep_an_api_key_and_a_jwt_subject_of_the_same_name_apart(make_gateway, tmp_path):
    import jwt

    secret = "0123456789abcdef0123456789abcdef-usage-kinds"
    keys_file = tmp_path / "keys.yaml"
    bob_key = write_key(keys_file, "bob")
    root = write_key(keys_file, "ops", admin=True)
    gw = make_gateway(
        auth={
            "keys_file": str(keys_file),
            "jwt": {"issuer": "i", "audience": "a", "algorithms": ["HS256"], "secret": secret},
        },
        usage={"flush_interval": 0.02},
        routing={"health_interval": 60},
    )
    claims = {"iss": "i", "aud": "a", "sub": "bob", "exp": int(time.time()) + 300}
    bob_jwt = jwt.encode(claims, secret, "HS256")
    for credential in (bob_key, bob_jwt, bob_jwt):
        assert post(gw, {"model": "auto", "messages": CHAT}, key=credential).status_code == 200

    def get(credential: str, **params: str) -> httpx.Response:
        return httpx.get(
            gw.base_url + "/gateway/usage", params=params, headers={"authorization": f"Bearer {credential}"}
        )

    assert wait_for(lambda: sum(r["requests"] for r in get(root).json()["data"]) == 3)
    everyone = {(r["key"], r["kind"]): r["requests"] for r in get(root, by="key").json()["data"]}
    assert everyone == {("bob", "key"): 1, ("bob", "jwt"): 2}
    assert [(r["key"], r["requests"]) for r in get(root, key="bob", kind="jwt").json()["data"]] == [
        ("bob", 2)
    ]
    # Each bob reads its own rows only, and may not ask for the other's.
    assert [(r["kind"], r["requests"]) for r in get(bob_key).json()["data"]] == [("key", 1)]
    assert [(r["kind"], r["requests"]) for r in get(bob_jwt).json()["data"]] == [("jwt", 2)]
    assert get(bob_key, kind="jwt").status_code == 403
    bad = get(root, kind="robot")
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "kind"


def test_usage_api_parses_its_parameters_strictly(make_gateway, postgres, tmp_path):
    """Every parameter, with values that pass a loose check: a 400 envelope naming the parameter, never a
    500 (int("²") raises though "²".isdigit() is true) and never a 503 from a query the store refuses (a
    NUL in a key). Against PostgreSQL, which refuses what SQLite would take."""
    keys_file = tmp_path / "keys.yaml"
    alice = write_key(keys_file, "alice")
    root = write_key(keys_file, "ops", admin=True)
    gw = make_gateway(
        auth={"keys_file": str(keys_file)}, usage={"url": fresh_database(postgres, "strict_params")}
    )
    for credential in (root, alice):
        for query, param in (
            ("limit=%C2%B2", "limit"),  # ²
            ("limit=%D9%A3", "limit"),  # ٣, ARABIC-INDIC DIGIT THREE: int() reads it as 3
            ("limit=1_000", "limit"),
            ("limit=+5", "limit"),
            ("limit=%205", "limit"),
            ("limit=" + "0" * 4000 + "1", "limit"),
            ("limit=10001", "limit"),
            ("limit=1&limit=2", "limit"),
            ("since=%D9%A3d", "since"),
            ("since=7x", "since"),
            ("since=", "since"),
            ("by=", "by"),
            ("by=key&by=day", "by"),
            ("kind=KEY", "kind"),
            ("key=a%00b", "key"),
            ("key=" + "k" * 257, "key"),
            ("key=", "key"),
        ):
            r = httpx.get(
                f"{gw.base_url}/gateway/usage?{query}", headers={"authorization": f"Bearer {credential}"}
            )
            assert r.status_code == 400, (query, r.status_code, r.text[:200])
            error = r.json()["error"]
            assert (error["type"], error["code"], error["param"]) == (
                "invalid_request_error",
                "invalid_parameter",
                param,
            ), query
    r = httpx.get(f"{gw.base_url}/gateway/usage?%C2%B2=1", headers={"authorization": f"Bearer {root}"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_parameter"
    ok = httpx.get(
        f"{gw.base_url}/gateway/usage?limit=10000&since=1d&by=model",
        headers={"authorization": f"Bearer {root}"},
    )
    assert ok.status_code == 200 and ok.json()["object"] == "gateway.usage"


def test_cli_usage_refuses_a_limit_that_is_not_a_positive_integer(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'usage.db'}"
    for bad in ("0", "-5", "\u00b2", "\u0663"):
        with pytest.raises(SystemExit) as exit_:
            main(["usage", "--url", url, "--limit", bad])
        assert exit_.value.code == 2
        assert "--limit" in capsys.readouterr().err


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
        # Most backend time first; the key bob and the JWT subject bob are two principals, two rows.
        assert [(r["key"], r["kind"]) for r in by_key][:3] == [
            ("bob", "key"),
            ("alice", "key"),
            ("bob", "jwt"),
        ]
        bob = by_key[0]
        assert (bob["requests"], bob["errors"], bob["backend_seconds"]) == (1, 1, 4.0)
        assert (by_key[2]["requests"], by_key[2]["errors"], by_key[2]["backend_seconds"]) == (1, 0, 1.0)
        jwt_only = summarize(store, UsageQuery(since=now - 7 * 86400, by="key", principal_kind="jwt"))
        assert [(r["key"], r["kind"], r["requests"]) for r in jwt_only] == [("bob", "jwt", 1)]
        by_backend = {
            r["backend"]: r for r in summarize(store, UsageQuery(since=now - 7 * 86400, by="backend"))
        }
        assert by_backend["autoregressive"]["requests"] == 1 and by_backend["diffusion"]["requests"] == 4
        only_key = summarize(
            store, UsageQuery(since=now - 86400, by="day", principal="bob", principal_kind="key")
        )
        assert len(only_key) == 1 and only_key[0]["requests"] == 1
        assert len(summarize(store, UsageQuery(since=now - 60 * 86400, by="key"))) == 5  # carol too
        assert store.expire(30) == 1
        assert "carol" not in [r["key"] for r in summarize(store, UsageQuery(since=0, by="key"))]
        # The writer's clean-up goes in chunks, oldest first.
        store.write([record(principal="dave", ts=now - (40 + i) * 86400) for i in range(3)])
        assert [store.expire(30, limit=2), store.expire(30, limit=2), store.expire(30, limit=2)] == [2, 1, 0]
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


# ---- one tenant's row never costs another tenant's --------------------------------------------------------

# Values a store refuses: NUL (PostgreSQL), a lone surrogate (neither driver can encode it), an integer
# past PostgreSQL's INTEGER (and past SQLite's 64 bits), NaN and infinities, strings past their columns.
POISON = [
    {"request_id": "nul", "model": "auto\x00", "principal": "mallory"},
    {"request_id": "surrogate", "model": "x\ud800y", "principal": "mal\udfffory"},
    {"request_id": "huge", "prompt_tokens": 2**40, "completion_tokens": 2**70, "status": -(2**64)},
    {"request_id": "nan", "duration_ms": float("nan"), "ttfb_ms": float("inf"), "canvas_fill": float("nan")},
    {"request_id": "long", "api": "a" * 100, "backend": "b" * 1000, "outcome": "o" * 100, "day": "d" * 20},
]


def exercise_poison(url: str) -> None:
    """Victims' rows and poisoned rows in one batch: every row is written, the poisoned ones cleaned."""
    store = UsageStore(url)
    dropped: dict[str, int] = {}
    writer = UsageWriter(
        store,
        queue_size=100,
        batch_size=100,
        flush_interval=0.01,
        on_dropped=lambda n, reason: dropped.__setitem__(reason, dropped.get(reason, 0) + n),
    )
    for i, poison in enumerate(POISON):  # queued before the thread starts: one batch
        writer.submit(record(request_id=f"victim-{i}", principal="victim"))
        writer.submit(record(**poison))
    writer.start()
    try:
        assert wait_for(lambda: writer.written == 2 * len(POISON)), (writer.written, dropped)
    finally:
        writer.close(timeout=5)
    assert dropped == {} and writer.dropped == 0
    by_id = {r["request_id"]: r for r in rows(url)}
    assert sum(1 for r in by_id.values() if r["principal"] == "victim") == len(POISON)
    assert by_id["nul"]["model"] == "auto\ufffd"
    assert (by_id["surrogate"]["model"], by_id["surrogate"]["principal"]) == ("x\ufffdy", "mal\ufffdory")
    huge = by_id["huge"]
    top = 2**31 - 1
    assert (huge["prompt_tokens"], huge["completion_tokens"], huge["status"]) == (top, top, -top - 1)
    nan = by_id["nan"]
    assert (nan["duration_ms"], nan["ttfb_ms"], nan["canvas_fill"]) == (0.0, None, None)
    long = by_id["long"]
    lengths = [len(long[column]) for column in ("api", "backend", "outcome", "day")]
    assert lengths == [16, 64, 32, 10]


def test_a_poisoned_row_costs_no_other_row_on_sqlite(tmp_path):
    exercise_poison(f"sqlite:///{tmp_path / 'usage.db'}")


def test_rows_are_built_on_the_writer_thread_and_one_that_fails_costs_itself(tmp_path):
    """The request side queues what a row is built from; ``build`` runs on the writer's thread. One that
    raises there costs its own row (counted as refused), not the batch and not the thread."""
    url = f"sqlite:///{tmp_path / 'usage.db'}"
    dropped: dict[str, int] = {}
    threads: set[str] = set()

    def build(item: str) -> Any:
        threads.add(threading.current_thread().name)
        if item == "broken":
            raise ValueError(item)
        return record(request_id=item)

    writer = UsageWriter(
        UsageStore(url),
        queue_size=100,
        batch_size=100,
        flush_interval=0.01,
        on_dropped=lambda n, reason: dropped.__setitem__(reason, dropped.get(reason, 0) + n),
        build=build,
    )
    for item in ("first", "broken", "last"):
        writer.submit(item)
    assert threads == set()  # nothing built on the caller's side
    writer.start()
    try:
        assert wait_for(lambda: writer.written == 2), (writer.written, dropped)
        writer.submit("after")
        assert wait_for(lambda: writer.written == 3)
    finally:
        writer.close(timeout=5)
    assert dropped == {"refused": 1}
    assert threads == {"usage-writer"}
    assert sorted(r["request_id"] for r in rows(url)) == ["after", "first", "last"]


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="per-thread niceness is Linux's")
def test_the_writer_thread_runs_below_the_event_loop(tmp_path):
    """The writer's CPU must not take the core from the event loop in the scheduler's slices: its thread
    is niced (Linux schedules threads apart), the rest of the process is not."""
    from gateway.usage.writer import WRITER_NICENESS

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    writer = UsageWriter(
        UsageStore(f"sqlite:///{tmp_path / 'usage.db'}"), queue_size=10, batch_size=10, flush_interval=0.01
    )
    writer.start()
    try:
        assert wait_for(lambda: writer._thread.native_id is not None)
        tid = writer._thread.native_id
        assert wait_for(lambda: os.getpriority(os.PRIO_PROCESS, tid) == min(19, before + WRITER_NICENESS))
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
    finally:
        writer.close(timeout=5)


def test_a_poisoned_row_costs_no_other_row_on_postgres(postgres):
    url = postgres.url.rsplit("/", 1)[0] + "/poison"
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE poison")
    exercise_poison(url)


def exercise_refusal(url: str, refuse: str) -> None:
    """A row the store refuses whatever its values (``refuse``: a rule added to the database, standing in
    for whatever a store may refuse next) costs that row only: the batch is retried row by row."""
    store = UsageStore(url)
    store.migrate()
    with store.engine.begin() as conn:
        conn.exec_driver_sql(refuse)
    dropped: dict[str, int] = {}
    writer = UsageWriter(
        store,
        queue_size=100,
        batch_size=100,
        flush_interval=0.01,
        on_dropped=lambda n, reason: dropped.__setitem__(reason, dropped.get(reason, 0) + n),
    )
    for i in range(3):
        writer.submit(record(request_id=f"victim-{i}", principal="victim"))
        writer.submit(record(request_id=f"refused-{i}", model="refuse-me"))
    writer.start()
    try:
        assert wait_for(lambda: writer.written == 3 and dropped.get("refused") == 3), dropped
    finally:
        writer.close(timeout=5)
    assert sorted(r["request_id"] for r in rows(url)) == ["victim-0", "victim-1", "victim-2"]
    assert dropped == {"refused": 3} and writer.dropped == 3


def test_a_row_sqlite_refuses_is_dropped_alone_and_counted(tmp_path):
    exercise_refusal(
        f"sqlite:///{tmp_path / 'usage.db'}",
        "CREATE TRIGGER refuse BEFORE INSERT ON usage_records WHEN NEW.model = 'refuse-me' "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END",
    )


def test_a_row_postgres_refuses_is_dropped_alone_and_counted(postgres):
    url = postgres.url.rsplit("/", 1)[0] + "/refusal"
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE refusal")
    exercise_refusal(url, "ALTER TABLE usage_records ADD CONSTRAINT refuse CHECK (model <> 'refuse-me')")


def test_a_nul_in_one_tenants_model_costs_no_other_tenant_a_row_on_postgres(make_gateway, postgres, tmp_path):
    """End to end: requests whose model holds U+0000, interleaved with a victim's ordinary requests."""
    url = postgres.url.rsplit("/", 1)[0] + "/nul_e2e"
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE nul_e2e")
    keys_file = tmp_path / "keys.yaml"
    victim = write_key(keys_file, "victim")
    mallory = write_key(keys_file, "mallory")
    gw = make_gateway(auth={"keys_file": str(keys_file)}, usage={"url": url, "flush_interval": 0.05})
    for _ in range(5):
        assert post(gw, {"model": "auto", "messages": CHAT}, key=victim).status_code == 200
        assert post(gw, {"model": "auto\u0000", "messages": CHAT}, key=mallory).status_code < 500
    gw.server.__exit__()
    ledger = rows(url)
    assert sum(1 for r in ledger if r["principal"] == "victim") == 5
    assert [r["model"] for r in ledger if r["principal"] == "mallory"] == ["auto\ufffd"] * 5
    assert gw.metric("gateway_usage_records_dropped_total") == 0


# ---- a store that stops answering -----------------------------------------------------------------------


def fresh_database(postgres: PostgresServer, name: str) -> str:
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres.url.rsplit("/", 1)[0] + "/" + name


def server_processes(postgres: PostgresServer) -> list[int]:
    """The postmaster and every process it started: the whole server, as a paused container has it."""
    assert postgres.proc is not None
    found = [postgres.proc.pid]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postgres.proc.pid:
            found.append(int(stat.parent.name))
    return found


def counting(dropped: dict[str, int]) -> Any:
    return lambda n, reason: dropped.__setitem__(reason, dropped.get(reason, 0) + n)


def test_a_frozen_postgres_times_the_writer_out_and_says_so(postgres, caplog):
    """Every PostgreSQL process stopped (SIGSTOP): no statement timeout can fire on the server, the
    watchdog ends the write. The batch is dropped and counted, a warning names its size, and once the
    server runs again the writer goes on writing."""
    import os
    import signal

    url = fresh_database(postgres, "frozen")
    store = UsageStore(url, connect_timeout=1, write_timeout=0.3)
    dropped: dict[str, int] = {}
    writer = UsageWriter(
        store,
        queue_size=100,
        batch_size=3,  # a batch is taken when 3 are queued: the flush interval never splits one
        flush_interval=60,
        on_dropped=counting(dropped),
        write_timeout=0.3,
        slow_write=0.1,
    )
    writer.start()
    try:
        for i in range(3):
            writer.submit(record(request_id=f"before-{i}"))
        assert wait_for(lambda: writer.written == 3, within=30)
        processes = server_processes(postgres)
        with caplog.at_level(logging.WARNING, logger="gateway.usage"):
            for pid in processes:
                os.kill(pid, signal.SIGSTOP)
            try:
                for i in range(3):
                    writer.submit(record(request_id=f"frozen-{i}"))
                assert wait_for(lambda: dropped.get("timeout") == 3, within=30), dropped
            finally:
                for pid in processes:
                    os.kill(pid, signal.SIGCONT)
        for i in range(3):
            writer.submit(record(request_id=f"after-{i}"))
        assert wait_for(lambda: writer.written == 6, within=30), dropped
    finally:
        writer.close(timeout=5)
    assert dropped == {"timeout": 3}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("writing 3 records" in m and "so far" in m for m in warnings), warnings
    assert any("writing 3 records" in m and "timed out" in m for m in warnings), warnings
    # The frozen batch's transaction never reached its COMMIT: the server has none of it.
    assert sorted(r["request_id"] for r in rows(url)) == [
        f"{w}-{i}" for w in ("after", "before") for i in range(3)
    ]


def test_a_locked_table_ends_a_write_at_the_statement_timeout(postgres, caplog):
    """A live server whose table another session holds locked: PostgreSQL's own lock timeout ends the
    write (the writer has no watchdog here), the batch is dropped and counted, the next one written."""
    import psycopg

    url = fresh_database(postgres, "locked")
    store = UsageStore(url, write_timeout=0.2)
    store.migrate()
    dropped: dict[str, int] = {}
    writer = UsageWriter(store, queue_size=100, batch_size=2, flush_interval=60, on_dropped=counting(dropped))
    writer.start()
    try:
        with psycopg.connect(url) as holder, caplog.at_level(logging.WARNING, logger="gateway.usage"):
            holder.execute("LOCK TABLE usage_records IN ACCESS EXCLUSIVE MODE")
            writer.submit(record(request_id="locked-0"))
            writer.submit(record(request_id="locked-1"))
            assert wait_for(lambda: dropped.get("timeout") == 2, within=30), dropped
            holder.rollback()
        writer.submit(record(request_id="free-0"))
        writer.submit(record(request_id="free-1"))
        assert wait_for(lambda: writer.written == 2, within=30), dropped
    finally:
        writer.close(timeout=5)
    assert any(
        "writing 2 records" in r.getMessage() and "timed out" in r.getMessage() for r in caplog.records
    )
    assert sorted(r["request_id"] for r in rows(url)) == ["free-0", "free-1"]


def test_a_new_sqlite_ledger_and_its_side_files_are_readable_by_their_owner_only(tmp_path, caplog):
    import os
    import stat

    path = tmp_path / "private.db"
    umask = os.umask(0o022)  # the usual one, under which sqlite3 alone creates the file 0644
    store = UsageStore(f"sqlite:///{path}")
    try:
        store.write([record()])
        # While the store is open, in WAL mode: the database, its write-ahead log and its shared memory.
        files = [path, path.with_name("private.db-wal"), path.with_name("private.db-shm")]
        assert {f.name: oct(stat.S_IMODE(f.stat().st_mode)) for f in files} == {
            f.name: "0o600" for f in files
        }
    finally:
        os.umask(umask)
        store.dispose()
    # A file that already exists keeps its mode (an operator's choice), reported when others may read it.
    shared = tmp_path / "shared.db"
    shared.touch(mode=0o644)
    shared.chmod(0o644)
    other = UsageStore(f"sqlite:///{shared}")
    with caplog.at_level(logging.WARNING, logger="gateway.usage"):
        other.write([record()])
    other.dispose()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644
    assert "readable by other users (mode 0644)" in caplog.text


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
    store.write(
        [
            record(principal="alice"),
            record(principal="bob", backend_seconds=2.0),
            record(principal="alice", principal_kind="jwt", backend_seconds=0.25),
        ]
    )
    store.dispose()
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "backends:\n  - {name: a, kind: autoregressive, url: 'http://127.0.0.1:9', model: m}\n"
        f"usage:\n  url: '{url}'\n"
    )
    assert main(["usage", "--config", str(config), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["key"], r["kind"]) for r in data] == [("bob", "key"), ("alice", "key"), ("alice", "jwt")]
    assert main(["usage", "--config", str(config), "--kind", "jwt"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["KEY", "KIND", "REQUESTS"] and table[1].split()[:3] == [
        "alice",
        "jwt",
        "1",
    ]
    assert len(table) == 2
    assert (
        main(
            [
                "usage",
                "--config",
                str(config),
                "--key",
                "alice",
                "--kind",
                "key",
                "--by",
                "backend",
                "--format",
                "csv",
            ]
        )
        == 0
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
    [panel] = [p for p in dashboard["panels"] if p.get("datasource", {}).get("uid") == "${ledger}"]
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
            record(principal="bob", principal_kind="jwt", backend_seconds=0.5),
            record(
                principal=None, principal_kind=None, backend_seconds=0.0, status=503, outcome="auth_error"
            ),
            record(principal="carol", backend_seconds=50.0, ts=now - 7200),  # outside the range
        ]
    )
    store.dispose()
    # $__unixEpochFilter(ts) is Grafana's "ts BETWEEN <from> AND <to>" in Unix seconds.
    expanded = sql.replace("$__unixEpochFilter(ts)", f"ts BETWEEN {now - 3600} AND {now + 60}")
    with psycopg.connect(url) as conn:
        table = conn.execute(expanded).fetchall()
    assert [
        (key, kind, requests, seconds, errors) for key, kind, requests, seconds, _, _, errors in table
    ] == [
        ("bob", "key", 2, 5.0, 1),
        ("alice", "key", 1, 1.0, 0),
        ("bob", "jwt", 1, 0.5, 0),
        ("(unauthenticated)", "-", 1, 0.0, 1),
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


def test_cli_usage_refuses_to_create_a_ledger_and_names_the_file_it_looked_for(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GATEWAY_CONFIG", raising=False)
    monkeypatch.delenv("GATEWAY_USAGE__URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["usage"]) == 1
    err = capsys.readouterr().err
    assert f"no usage ledger at {tmp_path / 'usage.db'} (the default" in err and "--config" in err
    assert list(tmp_path.iterdir()) == []  # nothing created: an empty ledger would look like no traffic
    config = tmp_path / "conf" / "gateway.yaml"
    config.parent.mkdir()
    config.write_text(
        "backends:\n  - {name: a, kind: autoregressive, url: 'http://127.0.0.1:9', model: m}\n"
        "usage:\n  url: sqlite:///usage.db\n"
    )
    assert main(["usage", "--config", str(config)]) == 1
    assert (
        f"no usage ledger at {tmp_path / 'conf' / 'usage.db'} (usage.url of {config})"
        in capsys.readouterr().err
    )
    assert sorted(p.name for p in config.parent.iterdir()) == ["gateway.yaml"]


def test_cli_usage_says_which_ledger_it_read_and_names_the_rejected_requests_row(
    tmp_path, capsys, monkeypatch
):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    store = UsageStore(url)
    store.write([record(), record(backend=None, status=403, outcome="client_error", backend_seconds=0.0)])
    store.dispose()
    monkeypatch.delenv("GATEWAY_CONFIG", raising=False)
    monkeypatch.setenv("GATEWAY_USAGE__URL", url)
    assert main(["usage", "--by", "backend"]) == 0
    out, err = capsys.readouterr()
    assert err == f"gateway: usage ledger {url} (from $GATEWAY_USAGE__URL)\n"
    table = out.splitlines()
    assert table[1].startswith("diffusion ") and table[2].startswith("(none: rejected before a backend) ")
    assert main(["usage", "--by", "backend", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[2].startswith("(none: rejected before a backend),1,1,")
    assert main(["usage", "--by", "backend", "--format", "json"]) == 0
    assert [row["backend"] for row in json.loads(capsys.readouterr().out)] == ["diffusion", None]


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
    import psycopg

    ledger = grafana_reader_database(postgres)
    store = UsageStore(ledger)
    store.write([record(principal="alice")])
    store.dispose()
    reader = f"postgresql://grafana:reader-secret@127.0.0.1:{postgres.port}/gateway"
    with psycopg.connect(reader) as conn:
        assert conn.execute("SELECT principal FROM usage_records").fetchall() == [("alice",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM usage_records")
