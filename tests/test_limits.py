"""Limits against a real redis-server started by the tests; gateway processes as real subprocesses."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import orjson
import pytest
import redis as redis_py
import yaml
from prometheus_client.mmap_dict import MmapedDict

from gateway.proxy.cost import estimate_prompt_tokens
from tests.redis_support import RedisServer, free_port
from tests.support import AR_MODEL, DIFFUSION_MODEL, METRICS_TOKEN, SIM_HEADERS, wait_for, write_key

CHAT = [{"role": "user", "content": "Hi! How was your weekend?"}]
# What the gateway reserves for CHAT's prompt; the simulator counts it as 11 tokens.
ESTIMATE = estimate_prompt_tokens({"messages": CHAT})


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path).start()
    try:
        yield server
    finally:
        server.stop()


class GatewayProcess:
    """``gateway serve`` in a subprocess, the way an operator runs it."""

    def __init__(self, config: Path, workers: int = 1, env: dict[str, str] | None = None) -> None:
        self.port = yaml.safe_load(config.read_text())["server"]["port"]
        self.url = f"http://127.0.0.1:{self.port}"
        environment = {
            **os.environ,
            **(env or {}),
            "GATEWAY_BACKENDS__DIFFUSION__API_KEY": "sim-diffusion-key",
            "GATEWAY_BACKENDS__AUTOREGRESSIVE__API_KEY": "sim-ar-key",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", "serve", "--config", str(config), "--workers", str(workers)],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        if not wait_for(self._up, within=60, step=0.1):
            self.stop()
            raise RuntimeError(
                "gateway did not start: " + (self.proc.stderr.read().decode() if self.proc.stderr else "")
            )

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            return True
        try:
            return httpx.get(self.url + "/healthz", timeout=0.5).status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def write_config(tmp_path: Path, diffusion_sim, ar_sim, *, name: str = "gateway.yaml", **sections) -> Path:
    # The simulators' fault injection header reaches them only when forwarded (edge.forward_headers).
    sections["edge"] = {"forward_headers": list(SIM_HEADERS), **sections.get("edge", {})}
    config = {
        "server": {"host": "127.0.0.1", "port": free_port(), "log_level": "warning"},
        "backends": [
            {"name": "diffusion", "kind": "diffusion", "url": diffusion_sim.url, "model": DIFFUSION_MODEL},
            {"name": "autoregressive", "kind": "autoregressive", "url": ar_sim.url, "model": AR_MODEL},
        ],
        "auth": {"keys_file": str(tmp_path / "keys.yaml"), "reload_interval": 0.1},
        **sections,
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


def chat(url: str, key: str, **extra) -> httpx.Response:
    body = {"model": "auto", "messages": CHAT, **extra.pop("body", {})}
    return httpx.post(
        url + "/v1/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {key}", **extra},
        timeout=10,
    )


def test_two_gateway_processes_share_one_requests_per_minute_limit(tmp_path, redis, diffusion_sim, ar_sim):
    key = write_key(tmp_path / "keys.yaml", "shared")
    config = write_config(
        tmp_path, diffusion_sim, ar_sim, state={"redis_url": redis.url}, limits={"requests_per_minute": 10}
    )
    second = write_config(
        tmp_path,
        diffusion_sim,
        ar_sim,
        name="second.yaml",
        state={"redis_url": redis.url},
        limits={"requests_per_minute": 10},
    )
    a, b = GatewayProcess(config), GatewayProcess(second)
    try:
        statuses = [chat(gw.url, key).status_code for _ in range(8) for gw in (a, b)]
    finally:
        a.stop()
        b.stop()
    assert statuses.count(200) == 10  # not 10 per process: 10 in all
    assert statuses.count(429) == 6 and set(statuses) == {200, 429}


def _tokens_charged(store: redis_py.Redis) -> int:
    """Tokens the store holds in any key's tokens-per-minute buckets."""
    return sum(int(store.get(k) or 0) for k in store.scan_iter(match="*:tpm:*"))


def test_tokens_per_minute_counts_streamed_responses(tmp_path, redis, make_gateway):
    gw = make_gateway(state={"redis_url": redis.url}, limits={"tokens_per_minute": 40})
    store = redis_py.Redis.from_url(redis.url)
    # Reserved: the prompt's estimate and max_tokens; spent: the simulator's count of the prompt and the
    # 5 tokens it writes (it writes at least 24 when it may).
    reserved, spent = ESTIMATE + 5, 11 + 5
    assert reserved != spent
    body = {"stream": True, "max_tokens": 5}  # no include_usage asked: the gateway asks for it upstream
    first = chat(gw.url, gw.key, body=body)
    assert first.status_code == 200 and "data: [DONE]" in first.text and '"usage"' not in first.text
    assert first.headers["x-ratelimit-remaining-tokens"] == str(40 - reserved)
    # Once the stream has ended its reservation is replaced by its usage. Watched in the store itself: a
    # request sent to find out would reserve tokens of its own.
    assert wait_for(lambda: _tokens_charged(store) == spent)
    r = chat(gw.url, gw.key, body={"max_tokens": 10})  # 10 + the estimate: more than the 24 left
    assert r.status_code == 429
    assert r.json()["error"]["type"] == "tokens" and r.headers["x-ratelimit-remaining-tokens"] == "24"


def test_a_killed_processs_concurrency_slot_is_released_when_its_lease_expires(
    tmp_path, redis, diffusion_sim, ar_sim
):
    key = write_key(tmp_path / "keys.yaml", "one-at-a-time", limits={"concurrent_requests": 1})
    state = {"redis_url": redis.url, "lease_ttl": 1.0}
    a = GatewayProcess(write_config(tmp_path, diffusion_sim, ar_sim, state=state))
    b = GatewayProcess(write_config(tmp_path, diffusion_sim, ar_sim, name="b.yaml", state=state))
    try:
        running = diffusion_sim.state.running

        def hold() -> None:
            with contextlib.suppress(httpx.HTTPError):  # the process is killed under it
                chat(a.url, key, body={"stream": True}, **{"x-sim-fault": "stall_after=0"})

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        assert wait_for(lambda: diffusion_sim.state.running > running)
        a.kill()  # no chance to give the slot back
        refused = chat(b.url, key)
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "concurrency_limit_exceeded"
        assert wait_for(lambda: chat(b.url, key).status_code == 200, within=15)
    finally:
        a.stop()
        b.stop()


@pytest.mark.parametrize(("mode", "status"), [("open", 200), ("closed", 503)])
def test_redis_stopped_mid_run(redis, make_gateway, mode, status):
    gw = make_gateway(
        state={"redis_url": redis.url, "on_unavailable": mode, "timeout": 0.2},
        limits={"requests_per_minute": 100},
    )
    assert chat(gw.url, gw.key).status_code == 200
    redis.stop()
    statuses = [chat(gw.url, gw.key).status_code for _ in range(3)]
    assert statuses == [status] * 3  # never a 500, never a hang
    if mode == "closed":
        assert chat(gw.url, gw.key).json()["error"]["code"] == "rate_limiter_unavailable"
    assert wait_for(lambda: gw.metric("gateway_state_store_errors_total", op="admit") >= 3)


def test_429s_match_openai_and_the_sdk_raises_rate_limit_error(redis, make_gateway):
    gw = make_gateway(
        state={"redis_url": redis.url}, limits={"requests_per_minute": 2, "tokens_per_minute": 100000}
    )
    client = openai.OpenAI(base_url=gw.base_url, api_key=gw.key, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model="auto", messages=CHAT)
    headers = raw.headers
    assert headers["x-ratelimit-limit-requests"] == "2" and headers["x-ratelimit-remaining-requests"] == "1"
    assert headers["x-ratelimit-limit-tokens"] == "100000"
    assert headers["x-ratelimit-reset-requests"].endswith("s")
    client.chat.completions.create(model="auto", messages=CHAT)
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="auto", messages=CHAT)
    response = info.value.response
    assert response.status_code == 429
    assert int(response.headers["retry-after"]) >= 1
    assert response.headers["x-ratelimit-remaining-requests"] == "0"
    assert info.value.body == {
        "message": info.value.body["message"],
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    assert gw.metric("gateway_rate_limited_total", principal="alice", limit="requests") == 1


def test_the_sdk_with_its_default_retries_gives_up_at_once_on_a_long_wait(make_gateway):
    # OpenAI's SDK sleeps for Retry-After and retries, twice by default: a limit that resets in a minute
    # would hang its caller for two without a word. x-should-retry: false makes it raise at once.
    gw = make_gateway(limits={"requests_per_minute": 1})
    client = openai.OpenAI(base_url=gw.base_url, api_key=gw.key, timeout=10)
    assert client.max_retries == 2  # the SDK's default, as applications use it
    client.chat.completions.create(model="auto", messages=CHAT)
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="auto", messages=CHAT)
    headers = info.value.response.headers
    assert headers["x-should-retry"] == "false" and int(headers["retry-after"]) > 5
    # The gateway saw one rejected request: the SDK sent it once and did not retry it.
    assert gw.metric("gateway_rate_limited_total", principal="alice", limit="requests") == 1


def test_a_wait_within_the_retry_hint_is_left_to_the_client_and_a_hopeless_request_is_not(make_gateway):
    gw = make_gateway(
        limits={"requests_per_minute": 2, "tokens_per_minute": 100, "retry_hint_max_seconds": 120}
    )
    too_large = chat(gw.url, gw.key, body={"max_tokens": 1000})  # no wait makes room for it
    assert too_large.status_code == 429 and too_large.headers["x-should-retry"] == "false"
    assert chat(gw.url, gw.key, body={"max_tokens": 10}).status_code == 200
    limited = chat(gw.url, gw.key, body={"max_tokens": 10})  # the request rate: about a minute, within 120
    assert limited.status_code == 429 and limited.json()["error"]["type"] == "requests"
    assert limited.headers["x-should-retry"] == "true"


def test_limits_come_from_keys_and_tiers(redis, make_gateway, tmp_path):
    gw = make_gateway(
        state={"redis_url": redis.url},
        limits={"requests_per_minute": 100},
        auth={
            "keys_file": str(tmp_path / "keys.yaml"),
            "reload_interval": 0.05,
            "tiers": {"free": {"limits": {"requests_per_minute": 1}}},
        },
    )
    free = write_key(gw.keys_file, "free-user", tier="free")
    custom = write_key(gw.keys_file, "custom", tier="free", limits={"requests_per_minute": 3})
    assert wait_for(lambda: chat(gw.url, custom).status_code == 200)
    assert [chat(gw.url, custom).status_code for _ in range(3)] == [200, 200, 429]
    assert chat(gw.url, free).status_code == 200 and chat(gw.url, free).status_code == 429
    assert chat(gw.url, gw.key).headers["x-ratelimit-limit-requests"] == "100"


def test_daily_quota(make_gateway):
    gw = make_gateway(limits={"daily_tokens": 60})  # in-memory store
    # Each request reserves the prompt's estimate + 10 and spends 11 + 10: two fit, the third does not.
    responses = [chat(gw.url, gw.key, body={"max_tokens": 10}) for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert responses[2].json()["error"]["code"] == "insufficient_quota"


def test_workers_share_limits_and_report_one_set_of_metrics(tmp_path, redis, diffusion_sim, ar_sim):
    key = write_key(tmp_path / "keys.yaml", "workers")
    metrics_dir = tmp_path / "prom"
    metrics_dir.mkdir()
    limit = 300
    config = write_config(
        tmp_path,
        diffusion_sim,
        ar_sim,
        state={"redis_url": redis.url},
        limits={"requests_per_minute": limit},
        telemetry={"metrics_token": METRICS_TOKEN},
    )
    gw = GatewayProcess(config, workers=2, env={"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)})

    def served_per_worker() -> list[float]:
        """The key's requests each worker counted, from its own metric file (named by its process id;
        a worker writes one at start-up, so the files alone do not show that it served anything)."""
        counts = []
        for path in metrics_dir.glob("counter_*.db"):
            counts.append(
                sum(
                    value
                    for key, value, *_ in MmapedDict.read_all_values_from_file(str(path))
                    if '"gateway_requests_total"' in key and '"principal": "workers"' in key
                )
            )
        return counts

    try:
        # Fresh connections until the limit answers: whichever worker takes each, one window counts them.
        statuses = []
        while len(statuses) <= limit and (not statuses or statuses[-1] == 200):
            statuses.append(chat(gw.url, key).status_code)
        per_worker = served_per_worker()
        rejected = chat(gw.url, key)
        text = httpx.get(gw.url + "/metrics", headers={"authorization": f"Bearer {METRICS_TOKEN}"}).text
    finally:
        gw.stop()
    assert len(per_worker) == 2 and all(per_worker)  # both workers served some of them
    assert statuses == [200] * limit + [429]  # not `limit` per worker: `limit` in all
    assert rejected.status_code == 429 and rejected.json()["error"]["type"] == "requests"
    from prometheus_client.parser import text_string_to_metric_families

    total = sum(
        s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name == "gateway_requests_total" and s.labels.get("principal") == "workers"
    )
    assert total == limit + 2  # the whole server's count, not one worker's: the 200s and both 429s


# ---- token budgets: reserved at admission, settled at the end -------------------------------------------


def _left(gw, limit: int) -> int | None:
    """What the key's tokens-per-minute budget has left, asked by a request too large for the limit:
    refused, it reserves nothing (None when it was not refused as too large)."""
    r = chat(gw.url, gw.key, body={"max_tokens": limit + 1})
    if r.status_code != 429 or "Request too large" not in r.json()["error"]["message"]:
        return None
    return int(r.headers["x-ratelimit-remaining-tokens"])


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_parallel_requests_spend_at_most_the_daily_quota_and_their_estimation_errors(
    request, make_gateway, store
):
    state = {"redis_url": request.getfixturevalue("redis").url} if store == "redis" else {}
    quota = 300
    gw = make_gateway(state=state, limits={"daily_tokens": quota})

    def wave(max_tokens: int) -> list[httpx.Response]:
        with ThreadPoolExecutor(20) as pool:
            return list(pool.map(lambda _: chat(gw.url, gw.key, body={"max_tokens": max_tokens}), range(20)))

    # Each may write 2,000 tokens: none fits in the quota, and none is lowered to fit.
    refused = wave(2000)
    assert {r.status_code for r in refused} == {429}
    assert {r.json()["error"]["code"] for r in refused} == {"insufficient_quota"}
    # Each reserves the prompt's estimate + 20: 8 fit in 300 at once, and more as the first ones end and
    # give back what they did not spend.
    responses = wave(20)
    served = [r.json()["usage"] for r in responses if r.status_code == 200]
    assert quota // (ESTIMATE + 20) <= len(served) < 20
    assert {r.json()["error"]["code"] for r in responses if r.status_code != 200} == {"insufficient_quota"}
    # What they spent: at most the quota, plus what each one's prompt took beyond its estimate.
    errors = sum(max(0, u["prompt_tokens"] - ESTIMATE) for u in served)
    assert sum(u["total_tokens"] for u in served) <= quota + errors


@pytest.mark.parametrize(
    ("fault", "status"),
    [("x-sim-fault", 502), ("x-sim-fault-diffusion", 200)],
    ids=["every-backend-fails", "fallback"],
)
def test_a_reservation_is_replaced_by_what_the_request_spent(make_gateway, fault, status):
    gw = make_gateway(limits={"tokens_per_minute": 1000})
    first = chat(gw.url, gw.key, body={"max_tokens": 900}, **{fault: "status=500"})  # 900 + the estimate
    assert first.status_code == status
    assert first.headers["x-ratelimit-remaining-tokens"] == str(1000 - 900 - ESTIMATE)
    spent = first.json()["usage"]["total_tokens"] if status == 200 else 0
    if status == 200:
        assert first.headers["x-gateway-fallback"].startswith("diffusion>autoregressive")
    # The reservation goes back once the request has ended (after its answer was sent), less its usage.
    assert wait_for(lambda: _left(gw, 1000) == 1000 - spent)


def _hung_up(caplog) -> dict | None:
    """The request log line of the one request whose client hung up (499) in this test."""
    lines = [getattr(r, "fields", {}) for r in caplog.records if r.name == "gateway.request"]
    return next((f for f in lines if f.get("status") == 499), None)


def test_an_aborted_stream_is_charged_its_prompt_and_what_it_relayed(make_gateway, caplog):
    caplog.set_level(logging.INFO, logger="gateway.request")
    gw = make_gateway(limits={"tokens_per_minute": 100_000})
    messages = [{"role": "user", "content": "word " * 3000}]  # 3,006 tokens as the simulator counts them
    estimate = estimate_prompt_tokens({"messages": messages})
    body = {"model": AR_MODEL, "messages": messages, "stream": True, "max_tokens": 200}
    headers = {"authorization": f"Bearer {gw.key}", "x-sim-fault": "stall_after=5"}
    with httpx.stream("POST", gw.url + "/v1/chat/completions", json=body, headers=headers, timeout=30) as r:
        assert r.headers["x-ratelimit-remaining-tokens"] == str(100_000 - estimate - 200)
        events = 0
        for line in r.iter_lines():
            events += line.startswith("data: ")
            if events == 5:  # all the backend sends before it stalls: the role and four tokens
                break
    assert wait_for(lambda: _hung_up(caplog) is not None)
    line = _hung_up(caplog)
    assert line is not None and line["outcome"] == "disconnected"
    # The backend's usage never came: the prompt is the gateway's estimate, and says so.
    assert line["usage_estimated"] is True
    assert (line["prompt_tokens"], line["completion_tokens"]) == (estimate, 4)
    assert wait_for(lambda: _left(gw, 100_000) == 100_000 - estimate - 4)


def test_a_client_gone_before_a_non_streamed_answer_is_charged_its_prompt(make_gateway, ar_sim, caplog):
    caplog.set_level(logging.INFO, logger="gateway.request")
    gw = make_gateway(limits={"tokens_per_minute": 100_000})
    messages = [{"role": "user", "content": "word " * 3000}]
    estimate = estimate_prompt_tokens({"messages": messages})
    body = orjson.dumps({"model": AR_MODEL, "messages": messages, "max_tokens": 200})
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {gw.key}\r\nx-sim-fault: stall_after=0\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    started = ar_sim.state.started
    with socket.create_connection(("127.0.0.1", gw.server.port)) as conn:
        conn.sendall(head.encode() + body)
        assert wait_for(lambda: ar_sim.state.started > started)  # the backend has the prompt: hang up
    assert wait_for(lambda: _hung_up(caplog) is not None)
    line = _hung_up(caplog)
    assert line is not None and line["outcome"] == "disconnected" and line["usage_estimated"] is True
    assert (line["prompt_tokens"], line["completion_tokens"]) == (estimate, 0)
    assert wait_for(lambda: _left(gw, 100_000) == 100_000 - estimate)


def test_a_model_the_key_may_not_use_is_403_even_at_its_rate_limit(make_gateway):
    gw = make_gateway()
    key = write_key(gw.keys_file, "narrow", models=[AR_MODEL], limits={"requests_per_minute": 1})
    assert wait_for(lambda: chat(gw.url, key, body={"model": AR_MODEL}).status_code == 200)  # the one
    for model in (DIFFUSION_MODEL, "auto"):
        denied = chat(gw.url, key, body={"model": model})
        assert denied.status_code == 403 and denied.json()["error"]["code"] == "model_not_allowed"
    dry_run = httpx.post(
        gw.url + "/v1/gateway/route",
        json={"model": DIFFUSION_MODEL, "messages": CHAT},
        headers={"authorization": f"Bearer {key}"},
    )
    assert dry_run.status_code == 403
    limited = chat(gw.url, key, body={"model": AR_MODEL})
    assert limited.status_code == 429 and limited.json()["error"]["type"] == "requests"


def test_the_model_list_the_dry_run_and_usage_count_against_the_request_rate(make_gateway):
    gw = make_gateway()
    key = write_key(gw.keys_file, "counted", limits={"requests_per_minute": 3})
    auth = {"authorization": f"Bearer {key}"}

    def models() -> httpx.Response:
        return httpx.get(gw.url + "/v1/models", headers=auth)

    def route() -> httpx.Response:
        return httpx.post(
            gw.url + "/v1/gateway/route", json={"model": "auto", "messages": CHAT}, headers=auth
        )

    def usage() -> httpx.Response:
        return httpx.get(gw.url + "/v1/gateway/usage", headers=auth)

    assert wait_for(lambda: models().status_code == 200)  # the key file reloaded: one request
    assert route().headers["x-ratelimit-remaining-requests"] == "1"
    assert usage().headers["x-ratelimit-remaining-requests"] == "0"
    for answer in (models(), route(), usage(), chat(gw.url, key)):
        assert answer.status_code == 429
        assert answer.json()["error"]["type"] == "requests" and "retry-after" in answer.headers
