"""Shadow evaluation end to end: real gateways on loopback in front of simulated (or canned) backends.

The client's answer is the same byte for byte with shadowing on or off; a busy backend gets no shadow
request; the shares and per-key settings hold; the judge's malformed and order-inconsistent verdicts are
discarded and counted; shadow traffic is never charged to the client nor counted by a breaker; the privacy
switch and the retention hold; and the loop closes: regret measured, labels exported, a model trained on
them, regret gone."""

from __future__ import annotations

import re
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.app import create_app
from gateway.routing import extract_features
from gateway.routing.scorer.load import load_model
from gateway.shadow.store import SampleRow, SampleStore
from gateway.simulator import SimulatorSettings, create_simulator
from gateway.simulator.plan import make_plan
from gateway.simulator.state import SimulatorState
from tests.conftest import sample_sum
from tests.support import AR_MODEL, ServerThread, checkout_env, gateway_settings, wait_for, write_key

# The simulated diffusion backend answers these worse (gateway/simulator/quality.py); the shipped scorer
# calls them easy, so they go to diffusion: regrets.
MONEY = [
    "What is an escrow account when buying a house?",
    "How does amortization work on a car loan?",
    "Explain probate to me in simple words.",
    "Can a lien be placed on my savings?",
    "What does reinsurance do for a small insurer?",
    "Is an annuity a good idea at sixty?",
    "What is subrogation in car insurance?",
    "What does a fiduciary owe their client?",
    "How long does probate usually take?",
    "Who pays the escrow fees at closing?",
    "Should I pay off the lien before selling?",
    "What is an indemnity clause in a lease?",
]
CHATTER = [
    "Hi! How was your weekend?",
    "Give me a fun fact about owls.",
    "Write a short poem about rain.",
    "What is the capital of France?",
    "Suggest a name for my new cat.",
    "Tell me a joke about penguins.",
    "What should I cook for dinner tonight?",
    "Recommend a good book for the summer.",
    "How do I say thank you in Spanish?",
    "What colour goes well with green?",
    "Any tips for sleeping better?",
    "Describe a sunset at the beach.",
]
# The scorer sends this to the autoregressive backend; the simulated diffusion one answers it as well.
PROOF = "Prove that there are infinitely many primes."


def chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "auto", "messages": [{"role": "user", "content": text}], **extra}


@dataclass
class Gw:
    server: ServerThread
    registry: CollectorRegistry
    keys: dict[str, str]
    usage_url: str

    def post(self, body: dict[str, Any], key: str = "alice", **headers: str) -> httpx.Response:
        h = {"authorization": f"Bearer {self.keys[key]}", **headers}
        return httpx.post(self.server.url + "/v1/chat/completions", json=body, headers=h, timeout=20)

    def metric(self, name: str, **labels: str) -> float:
        return sample_sum(self.registry, name, **labels)

    def settled(self) -> float:
        """Shadowed samples that reached an end: a verdict, a discard, or a judge that was not asked."""
        return (
            self.metric("gateway_shadow_verdicts_total")
            + self.metric("gateway_shadow_discarded_total")
            + self.metric("gateway_shadow_skipped_total", work="judge")
        )

    @property
    def state(self) -> Any:
        return self.server.app.state.gateway  # type: ignore[attr-defined]

    def samples(self) -> list[dict[str, Any]]:
        store = SampleStore(self.usage_url)
        try:
            return store.samples(0.0)
        finally:
            store.dispose()

    def stored(self, count: int, within: float = 10.0) -> list[dict[str, Any]]:
        """The stored samples once there are ``count`` (a sample is counted in the metrics, then written)."""
        assert wait_for(lambda: len(self.samples()) >= count, within=within), self.samples()
        return self.samples()


@dataclass
class Sim:
    server: ServerThread
    state: SimulatorState


def simulator(**settings: Any) -> Sim:
    app, state = create_simulator(SimulatorSettings(profile="instant", **settings))
    return Sim(ServerThread(app).__enter__(), state)


@pytest.fixture(scope="module")
def sims() -> Iterator[dict[str, Sim]]:
    started = {
        "diffusion": simulator(kind="diffusion"),
        # A fair judge, so that verdicts follow the answers' quality alone.
        "autoregressive": simulator(kind="autoregressive", judge_position_bias=0.0),
        "prose": simulator(kind="autoregressive", judge_unparsable=1.0),
        "biased": simulator(kind="autoregressive", judge_position_bias=1.0),
    }
    yield started
    for sim in started.values():
        sim.server.__exit__()


@pytest.fixture
def start(tmp_path: Path, sims: dict[str, Sim]) -> Iterator[Any]:
    servers: list[ServerThread] = []

    def start_gateway(
        *, diffusion: str | None = None, autoregressive: str | None = None, key_names=("alice",), **kw: Any
    ) -> Gw:
        keys_file = tmp_path / f"keys-{len(servers)}.yaml"
        keys = {name: write_key(keys_file, name) for name in key_names}
        kw.setdefault("usage", {"url": f"sqlite:///{tmp_path / f'usage-{len(servers)}.db'}"})
        usage_url = kw["usage"]["url"]
        settings = gateway_settings(
            diffusion or sims["diffusion"].server.url,
            autoregressive or sims["autoregressive"].server.url,
            auth={"keys_file": str(keys_file)},
            **kw,
        )
        registry = CollectorRegistry()
        server = ServerThread(create_app(settings, registry=registry)).__enter__()
        servers.append(server)
        return Gw(server, registry, keys, usage_url)

    yield start_gateway
    for server in servers:
        server.__exit__()


# ---- the client's answer -----------------------------------------------------------------------------------

CANNED = orjson.dumps(
    {
        "id": "chatcmpl-fixed",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hello there."}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
)


def _chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return b"data: " + orjson.dumps({**head, "choices": choices, **extra}) + b"\n\n"


CANNED_STREAM = [
    _chunk([{"index": 0, "delta": {"role": "assistant", "content": "Hello"}, "finish_reason": None}]),
    _chunk([{"index": 0, "delta": {"content": " there."}, "finish_reason": "stop"}]),
    _chunk([], usage={"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}),
    b"data: [DONE]\n\n",
]


def canned_backend(fail_unary: bool = False) -> tuple[ServerThread, list[dict[str, Any]]]:
    """A backend whose every answer is the same bytes; with ``fail_unary``, non-streaming requests get 500."""
    seen: list[dict[str, Any]] = []

    async def generate(request: Request) -> Response:
        body = orjson.loads(await request.body())
        seen.append(body)
        if body.get("stream"):

            async def chunks() -> Any:
                for chunk in CANNED_STREAM:
                    yield chunk

            from starlette.responses import StreamingResponse

            return StreamingResponse(chunks(), media_type="text/event-stream")
        if fail_unary:
            return Response(b'{"error": {"message": "boom"}}', status_code=500, media_type="application/json")
        return Response(CANNED, media_type="application/json")

    async def ok(request: Request) -> Response:
        return Response(b"")

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", generate, methods=["POST"]),
            Route("/health", ok),
            Route("/metrics", ok),
        ]
    )
    return ServerThread(app).__enter__(), seen


def test_the_client_gets_the_same_bytes_with_shadowing_on_and_off(start):
    diffusion, _ = canned_backend()
    autoregressive, seen = canned_backend()
    try:
        urls = {"diffusion": diffusion.url, "autoregressive": autoregressive.url}
        off = start(**urls)
        on = start(**urls, shadow={"share": 1.0, "store_content": True})
        bodies = [
            chat("Hi! How was your weekend?"),
            chat("Hi! How was your weekend?", stream=True),
            chat("Hi! How was your weekend?", stream=True, stream_options={"include_usage": True}),
            chat(PROOF, max_tokens=64),  # to the autoregressive backend: shadowed on diffusion
        ]
        for body in bodies:
            a, b = off.post(body), on.post(body)
            assert a.status_code == b.status_code == 200
            assert a.content == b.content
            strip = {"x-request-id", "date"}
            assert [h for h in a.headers.items() if h[0] not in strip] == [
                h for h in b.headers.items() if h[0] not in strip
            ]
        # The shadow work really ran behind the answers that stayed the same.
        assert wait_for(lambda: on.metric("gateway_shadow_requests_total", work="shadow") == len(bodies))
        assert off.metric("gateway_shadow_requests_total") == 0
        assert any(body.get("stream") is False and body.get("max_tokens") for body in seen)
    finally:
        diffusion.__exit__()
        autoregressive.__exit__()


# ---- when and how much -------------------------------------------------------------------------------------


def test_a_busy_backend_gets_no_shadow_request(start, sims):
    gw = start(
        shadow={"share": 1.0, "max_load": 0.5},
        backend_extra={"max_concurrency": 2},  # room for one request of the gateway's own at most
    )
    ar = sims["autoregressive"].state
    before = ar.started
    # A client's request keeps the autoregressive backend busy (the simulator waits 2 s before answering).
    pinned = threading.Thread(
        target=gw.post, args=(chat("Tell me a story", model=AR_MODEL),), kwargs={"x-sim-fault": "delay=2"}
    )
    pinned.start()
    try:
        assert wait_for(lambda: ar.started == before + 1)
        r = gw.post(chat("Hi! How was your weekend?"))
        assert r.headers["x-gateway-backend"] == "diffusion"
        assert wait_for(lambda: gw.metric("gateway_shadow_skipped_total", work="shadow", reason="busy") == 1)
        assert ar.started == before + 1  # nothing of the gateway's own reached it
    finally:
        pinned.join()
    # Idle again: the next one is shadowed.
    gw.post(chat("Hi! How was your weekend?"))
    assert wait_for(lambda: gw.metric("gateway_shadow_requests_total", work="shadow") == 1)


def test_shares_hold_per_key(start):
    gw = start(key_names=("alice", "bob"), shadow={"keys": {"bob": 1.0}})
    for text in CHATTER[:4]:
        assert gw.post(chat(text), key="alice").status_code == 200
        assert gw.post(chat(text), key="bob").status_code == 200
    assert wait_for(lambda: gw.settled() == 4)
    assert gw.metric("gateway_shadow_requests_total", work="shadow") == 4
    assert {s["principal"] for s in gw.stored(4)} == {"bob"}


def test_what_a_client_chose_or_a_rule_decided_is_not_shadowed(start):
    gw = start(shadow={"share": 1.0})
    gw.post(chat("Hi", model=AR_MODEL))
    gw.post(chat("Why does this fail?\n```python\nprint(a + b)\n```"))
    gw.post(chat("Hi", seed=3))
    gw.post(chat("Hi"), **{"x-sim-fault-diffusion": "status=500"})  # fell back
    assert wait_for(lambda: gw.metric("gateway_shadow_skipped_total") == 4)
    for reason in ("explicit", "rule", "incompatible", "fallback"):
        assert gw.metric("gateway_shadow_skipped_total", work="shadow", reason=reason) == 1, reason
    assert gw.metric("gateway_shadow_requests_total") == 0


# ---- the judge ---------------------------------------------------------------------------------------------


def test_unparsable_and_order_inconsistent_verdicts_are_discarded_and_counted(start, sims):
    prose = start(autoregressive=sims["prose"].server.url, shadow={"share": 1.0})
    biased = start(autoregressive=sims["biased"].server.url, shadow={"share": 1.0})
    for gw in (prose, biased):
        for text in (MONEY[0], CHATTER[0]):
            assert gw.post(chat(text)).status_code == 200
        assert wait_for(lambda gw=gw: gw.settled() == 2)
        assert gw.metric("gateway_shadow_verdicts_total") == 0
        assert gw.metric("gateway_route_regret_total") == 0
    assert prose.metric("gateway_shadow_discarded_total", reason="unparsable") == 2
    # An unparsable first reading is not asked again: one judge request per sample.
    assert prose.metric("gateway_shadow_requests_total", work="judge") == 2
    assert biased.metric("gateway_shadow_discarded_total", reason="inconsistent") == 2
    assert biased.metric("gateway_shadow_requests_total", work="judge") == 4
    assert {s["discarded"] for s in biased.stored(2)} == {"inconsistent"}


def _answer_tokens(kind: str, text: str) -> int:
    """How many tokens the simulated ``kind`` answers ``text`` with (the simulator is deterministic)."""
    view = chat(text)
    seed = orjson.dumps(view["messages"]).decode()
    return make_plan(view, SimulatorSettings(kind=kind), seed).completion_tokens  # type: ignore[arg-type]


def test_a_cut_answer_is_no_fair_comparison(start):
    gw = start(shadow={"share": 1.0})
    # Both cut: the shadow answer ends with finish_reason "length".
    assert gw.post(chat(MONEY[0], max_tokens=5)).status_code == 200
    # Only the client's answer cut, at the limit both are held to: the other backend's ends before it.
    text = next(t for t in MONEY if _answer_tokens("diffusion", t) > _answer_tokens("autoregressive", t) + 1)
    limit = _answer_tokens("autoregressive", text) + 1
    assert gw.post(chat(text, max_tokens=limit)).json()["usage"]["completion_tokens"] == limit
    assert wait_for(lambda: gw.settled() == 2)
    assert gw.metric("gateway_shadow_discarded_total", reason="truncated") == 2
    assert gw.metric("gateway_shadow_requests_total", work="judge") == 0


# ---- what shadow work never touches ------------------------------------------------------------------------


def test_failing_shadow_requests_count_in_no_breaker(start):
    diffusion, _ = canned_backend()
    autoregressive, _ = canned_backend(fail_unary=True)  # every shadow request to it fails
    try:
        gw = start(diffusion=diffusion.url, autoregressive=autoregressive.url, shadow={"share": 1.0})
        for _ in range(6):  # twice the failures that open a breaker
            r = gw.post(chat("Hi! How was your weekend?", stream=True))
            assert r.status_code == 200 and r.headers["x-gateway-backend"] == "diffusion"
        assert wait_for(lambda: gw.metric("gateway_shadow_discarded_total", reason="shadow_failed") == 6)
        state = gw.state.pool["autoregressive"]
        assert state.breaker.state == "closed" and state.in_flight == 0 and state.healthy
        assert gw.metric("gateway_upstream_errors_total") == 0 and gw.metric("gateway_fallbacks_total") == 0
        assert gw.metric("gateway_shadow_backend_seconds_total", work="shadow", backend="autoregressive") > 0
    finally:
        diffusion.__exit__()
        autoregressive.__exit__()


def test_shadow_work_is_never_charged_to_the_client_and_never_a_ledger_row(start):
    gw = start(shadow={"share": 1.0}, limits={"tokens_per_minute": 100_000})
    spent = 0
    for text in (MONEY[0], CHATTER[0], PROOF):
        r = gw.post(chat(text, max_tokens=200))
        spent += r.json()["usage"]["total_tokens"]
    assert wait_for(lambda: gw.settled() == 3)
    own = gw.metric("gateway_shadow_tokens_total")
    assert own > spent  # the shadows and their judges spent more than the clients did
    assert gw.metric("gateway_principal_tokens_total", principal="alice") == spent
    last = gw.post(chat("Hi", max_tokens=1))
    spent += last.json()["usage"]["total_tokens"]
    # What the limiter holds: the clients' tokens and the last one's reservation, never the shadows'.
    assert 100_000 - int(last.headers["x-ratelimit-remaining-tokens"]) < spent + 50
    gw.server.__exit__()  # a clean shutdown writes the ledger's queue
    with sqlite3.connect(gw.usage_url.removeprefix("sqlite:///")) as conn:
        assert conn.execute("SELECT count(*) FROM usage_records").fetchone()[0] == 4
        # Every request was sampled (the last one discarded: its answer was cut at its one token).
        assert conn.execute("SELECT count(*) FROM shadow_samples").fetchone()[0] == 4


# ---- privacy and retention ---------------------------------------------------------------------------------


def test_prompts_and_answers_are_kept_only_with_the_privacy_switch(start, tmp_path):
    off = start(shadow={"share": 1.0})
    off.post(chat(MONEY[0]))
    assert wait_for(lambda: off.settled() == 1)
    [row] = off.stored(1)
    assert (row["outcome"], row["verdict"], row["routed_to"]) == ("regret", "diffusion_worse", "diffusion")
    assert row["score"] < 0.5 and row["bucket"] == "0.0"
    for column in ("request", "routed_answer", "shadow_answer", "judge_reason", "top_features"):
        assert row[column] is None, column
    out = tmp_path / "labels.jsonl"
    result = labels(off.usage_url, out)
    assert result.returncode == 0 and "no stored prompt" in result.stderr
    assert out.read_text() == ""

    on = start(shadow={"share": 1.0, "store_content": True})
    on.post(chat(MONEY[1]))
    assert wait_for(lambda: on.settled() == 1)
    [row] = on.stored(1)
    assert orjson.loads(row["request"]) == {"messages": [{"role": "user", "content": MONEY[1]}]}
    assert row["routed_answer"].endswith("I might be wrong here.") and row["shadow_answer"]
    assert row["judge_reason"] and orjson.loads(row["top_features"])
    assert labels(on.usage_url, out).returncode == 0
    assert [orjson.loads(line)["label"] for line in out.read_text().splitlines()] == ["hard"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(on.usage_url.removeprefix("sqlite:///")).stat().st_mode) == 0o600


def old_row(days: float) -> SampleRow:
    ts = time.time() - days * 86400
    return SampleRow(
        ts, "2020-01-01", "r", "alice", "key", None, "chat", "diffusion", "diffusion", "autoregressive",
        "autoregressive", 0.1, 0.5, "0.1", "default:score=0.10", "regret", "diffusion_worse", None,
        0.1, 0.1, 10, 10, "worse", "[]", '{"prompt": "old"}', "a", "b",
    )  # fmt: skip


def test_stored_samples_are_deleted_past_their_retention(start, tmp_path):
    url = f"sqlite:///{tmp_path / 'kept.db'}"
    store = SampleStore(url)
    store.write(old_row(days=10))
    store.write(old_row(days=2))
    assert len(store.samples(0.0)) == 2
    # The gateway's clean-up runs when it starts, then hourly.
    start(shadow={"share": 1.0, "store_content": True, "retention_days": 7}, usage={"url": url})
    assert wait_for(lambda: len(store.samples(0.0)) == 1)
    assert store.expire(1) == 1 and store.samples(0.0) == []
    store.dispose()


# ---- the loop: measured, labelled, retrained, gone ---------------------------------------------------------


def labels(usage_url: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway",
            "router",
            "labels",
            "--url",
            usage_url,
            "--since",
            "1h",
            "--out",
            str(out),
        ],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_regret_is_measured_labelled_retrained_on_and_gone(start, tmp_path):
    pytest.importorskip("gateway_training", reason="the trainer: pip install -e ./training")
    gw = start(shadow={"share": 1.0, "store_content": True})
    for text in [*MONEY, *CHATTER, PROOF]:
        assert gw.post(chat(text)).status_code == 200
    assert wait_for(lambda: gw.settled() == len(MONEY) + len(CHATTER) + 1, within=30)
    regrets = gw.metric("gateway_route_regret_total", backend="diffusion")
    assert regrets == len(MONEY)
    # Each in the bucket of its score, all of them below the threshold.
    assert sum(gw.metric("gateway_route_regret_total", bucket=b) for b in ("0.0", "0.1", "0.2")) == regrets
    assert gw.metric("gateway_route_missed_saving_total", backend="autoregressive") == 1
    gw.stored(len(MONEY) + len(CHATTER) + 1)

    out = tmp_path / "labels.jsonl"
    exported = labels(gw.usage_url, out)
    assert exported.returncode == 0, exported.stderr
    rows = [orjson.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["label"] for r in rows) == ["easy"] * (len(CHATTER) + 1) + ["hard"] * len(MONEY)

    model = tmp_path / "retrained.bin.gz"
    trained = subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway",
            "router",
            "train",
            "--no-builtin",
            "--data",
            str(out),
            "--out",
            str(model),
        ],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert trained.returncode == 0, trained.stderr[-2000:]
    shipped, retrained = load_model("default"), load_model(str(model))

    def score(m: Any, text: str) -> float:
        return extract_features(chat(text), "chat", m).difficulty.score  # type: ignore[union-attr]

    assert all(score(retrained, t) > score(shipped, t) for t in MONEY)

    after = start(shadow={"share": 1.0}, routing={"scorer": {"model": str(model)}})
    for text in MONEY:
        assert after.post(chat(text)).headers["x-gateway-backend"] == "autoregressive"
    assert wait_for(lambda: after.settled() == len(MONEY), within=30)
    assert after.metric("gateway_route_regret_total") == 0
    # The judge still finds the diffusion answers worse: the router now agrees.
    assert after.metric(
        "gateway_shadow_verdicts_total", backend="autoregressive", verdict="diffusion_worse"
    ) == len(MONEY)

    threshold = subprocess.run(
        [sys.executable, "-m", "gateway", "router", "threshold", "--labels", str(out), "--cost-ratio", "0.2"],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert threshold.returncode == 0, threshold.stderr
    assert f"{len(rows)} labelled requests ({len(MONEY)} hard" in threshold.stdout
    assert "suggested threshold" in threshold.stdout


def test_the_demo_shows_regret_appearing():
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway", "demo", "--shadow", "--port", "0", "--profile", "instant"],
        env=checkout_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        banner = "".join(lines)
        base = re.search(r"(http://127\.0\.0\.1:\d+)/v1", banner).group(1)  # type: ignore[union-attr]
        key = re.search(r"(gw-[\w-]+)", banner).group(1)  # type: ignore[union-attr]
        token = re.search(r'/metrics -H "Authorization: Bearer ([\w-]+)"', banner).group(1)  # type: ignore[union-attr]
        assert "gateway router labels --url sqlite:///" in banner
        h = {"authorization": f"Bearer {key}"}
        r = httpx.post(
            base + "/v1/chat/completions", json=chat("Who pays the escrow fees?"), headers=h, timeout=10
        )
        assert r.status_code == 200 and r.headers["x-gateway-backend"] == "diffusion"

        def regret() -> bool:
            text = httpx.get(base + "/metrics", headers={"authorization": f"Bearer {token}"}, timeout=5).text
            return 'gateway_route_regret_total{backend="diffusion",bucket="0.0"} 1.0' in text

        assert wait_for(regret, within=20)
    finally:
        proc.send_signal(2)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
