"""The simulator speaks vLLM's wire format and follows each kind's timing shape (checked on its timeline,
not on the wall clock)."""

from __future__ import annotations

import contextlib
import math

import httpx
import orjson
import pytest
from prometheus_client import CollectorRegistry

from gateway.simulator import PROFILES, SimulatorSettings, create_simulator
from gateway.simulator.app import _Simulator
from gateway.simulator.plan import make_plan
from gateway.simulator.state import SimulatorState

MSG = {"messages": [{"role": "user", "content": "Tell me a story"}]}


def sim(kind, **kw):
    app, state = create_simulator(SimulatorSettings(kind=kind, profile="instant", **kw))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://sim"), state


def model_of(kind):
    return SimulatorSettings(kind=kind).resolved_model()


async def test_text_is_deterministic_and_usage_is_exact():
    client, _ = sim("autoregressive")
    body = {"model": model_of("autoregressive"), **MSG}
    a = (await client.post("/v1/chat/completions", json=body)).json()
    b = (await client.post("/v1/chat/completions", json=body)).json()
    assert a["choices"][0]["message"]["content"] == b["choices"][0]["message"]["content"]
    text = a["choices"][0]["message"]["content"]
    assert a["usage"]["completion_tokens"] == len(text.replace(".", " .").split())


async def test_diffusion_streams_one_chunk_per_canvas():
    client, _ = sim("diffusion", canvas_length=16)
    body = {
        "model": model_of("diffusion"),
        **MSG,
        "stream": True,
        "max_tokens": 40,
        "stream_options": {"include_usage": True},
    }
    events = [e for e in (await client.post("/v1/chat/completions", json=body)).text.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    chunks = [orjson.loads(e[6:]) for e in events[:-1]]
    content = [c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]
    assert len(content) == 3  # 40 tokens in canvases of 16
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 40


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("temperature", 0.5),
        ("seed", 1),
        ("min_p", 0.1),
        ("min_tokens", 2),
        ("logit_bias", {"1": 2}),
        ("bad_words", ["x"]),
        ("allowed_token_ids", [1]),
        ("response_format", {"type": "json_object"}),
    ],
)
async def test_diffusion_rejects_what_vllm_rejects(field, value):
    client, _ = sim("diffusion")
    r = await client.post("/v1/chat/completions", json={"model": model_of("diffusion"), **MSG, field: value})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "BadRequestError"
    ok = await client.post(
        "/v1/chat/completions", json={"model": model_of("diffusion"), **MSG, "temperature": 1.0}
    )
    assert ok.status_code == 200


async def test_vllm_error_shapes():
    client, _ = sim("autoregressive", api_key="k")
    assert (await client.get("/v1/models")).json() == {"error": "Unauthorized"}
    h = {"authorization": "Bearer k"}
    r = await client.post("/v1/chat/completions", json={"model": "nope", **MSG}, headers=h)
    assert r.status_code == 404 and r.json()["error"]["message"] == "The model `nope` does not exist."
    long = {"model": model_of("autoregressive"), "messages": [{"role": "user", "content": "w " * 40000}]}
    r = await client.post("/v1/chat/completions", json=long, headers=h)
    assert r.status_code == 400 and "maximum context length" in r.json()["error"]["message"]
    assert (await client.get("/health")).status_code == 200


async def test_thinking_fills_reasoning_and_counts_reasoning_tokens():
    client, _ = sim("autoregressive")
    body = {"model": model_of("autoregressive"), **MSG, "chat_template_kwargs": {"enable_thinking": True}}
    r = (await client.post("/v1/chat/completions", json=body)).json()
    assert r["choices"][0]["message"]["reasoning"]
    assert r["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0


async def test_metrics_expose_vllm_gauges_and_diffusion_counters():
    client, _ = sim("diffusion")
    await client.post("/v1/chat/completions", json={"model": model_of("diffusion"), **MSG})
    text = (await client.get("/metrics")).text
    for name in (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:diffusion_num_denoising_steps_total",
        "vllm:diffusion_num_canvas_positions_total",
        "vllm:diffusion_num_committed_tokens_total",
    ):
        assert name in text


def test_timelines_follow_each_kind():
    h100 = PROFILES["h100"]
    settings = SimulatorSettings(kind="diffusion", profile="h100", canvas_length=16)
    d = _Simulator(settings, SimulatorState(), CollectorRegistry())
    plan = make_plan(MSG, d.settings, "seed")
    waits = d._timeline(plan)
    assert len(waits) == math.ceil(plan.completion_tokens / 16) >= 2  # one wait per canvas
    assert waits[0] > h100.prefill_s  # prefill plus a whole first canvas before the first chunk
    assert all(0 < w <= h100.canvas_s + 1e-9 for w in waits[1:])
    fast = make_plan({**MSG, "vllm_xargs": {"diffusion_max_steps": 4}}, d.settings, "seed")
    assert sum(d._timeline(fast)) < sum(waits)  # fewer steps: faster canvases

    ar = _Simulator(
        SimulatorSettings(kind="autoregressive", profile="h100"), SimulatorState(), CollectorRegistry()
    )
    plan = make_plan({**MSG, "max_tokens": 50}, ar.settings, "seed")
    waits = ar._timeline(plan)
    assert len(waits) == 50 and waits[0] == h100.ttft_s and waits[1] == h100.token_s


async def test_fault_header_is_validated():
    client, _ = sim("autoregressive")
    r = await client.post(
        "/v1/chat/completions",
        json={"model": model_of("autoregressive"), **MSG},
        headers={"x-sim-fault": "status=200"},
    )
    assert r.status_code == 400


def test_requests_beyond_max_concurrency_wait_like_max_num_seqs():
    from tests.support import ServerThread, wait_for

    app, state = create_simulator(SimulatorSettings(kind="diffusion", profile="instant", max_concurrency=1))
    body = {"model": model_of("diffusion"), **MSG, "stream": True}
    with ServerThread(app) as server:
        import threading

        def call():
            with contextlib.suppress(httpx.ReadTimeout):
                httpx.post(
                    server.url + "/v1/chat/completions",
                    json=body,
                    headers={"x-sim-fault": "stall_after=0"},
                    timeout=1.5,
                )

        threads = [threading.Thread(target=call) for _ in range(2)]
        for t in threads:
            t.start()
        assert wait_for(lambda: state.running == 1 and state.waiting == 1)
        metrics = httpx.get(server.url + "/metrics").text
        assert 'vllm:num_requests_waiting{engine="0",model_name="' in metrics
        for t in threads:
            t.join()
        assert wait_for(lambda: state.running == 0 and state.waiting == 0 and state.cancelled == 2)
