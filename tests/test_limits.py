"""Limits against a real redis-server started by the tests; gateway processes as real subprocesses."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
import redis as redis_py
import yaml
from prometheus_client.mmap_dict import MmapedDict

from tests.redis_support import RedisServer, free_port
from tests.support import AR_MODEL, DIFFUSION_MODEL, METRICS_TOKEN, SIM_HEADERS, wait_for, write_key

CHAT = [{"role": "user", "content": "Hi! How was your weekend?"}]


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
    """Tokens the store holds in any key's tokens-per-minute window (admission only reads them)."""
    return sum(int(store.get(k) or 0) for k in store.scan_iter(match="*:tpm/*"))


def test_tokens_per_minute_counts_streamed_responses(tmp_path, redis, make_gateway):
    gw = make_gateway(state={"redis_url": redis.url}, limits={"tokens_per_minute": 20})
    store = redis_py.Redis.from_url(redis.url)
    first = chat(gw.base_url.removesuffix("/v1"), gw.key, body={"stream": True})  # no include_usage asked
    assert first.status_code == 200 and "data: [DONE]" in first.text
    # The stream's prompt and completion tokens (over 20) are charged once it has ended. Watched in the
    # store itself: a request sent to find out would spend tokens of its own and hide a stream that
    # was never charged.
    assert wait_for(lambda: _tokens_charged(store) > 0)
    r = chat(gw.url, gw.key)
    assert r.status_code == 429
    assert r.json()["error"]["type"] == "tokens" and r.headers["x-ratelimit-remaining-tokens"] == "0"


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
    gw = make_gateway(limits={"daily_tokens": 10})  # in-memory store
    assert chat(gw.url, gw.key).status_code == 200
    assert wait_for(lambda: chat(gw.url, gw.key).status_code == 429)
    assert chat(gw.url, gw.key).json()["error"]["code"] == "insufficient_quota"


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
