"""Routing end to end: real gateway, real simulators, their fault injection, and the why-headers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import orjson
import pytest

from gateway.simulator import SimulatorSettings, create_simulator
from tests.support import AR_MODEL, DIFFUSION_MODEL, ServerThread, reasons, wait_for

CHAT = [{"role": "user", "content": "Hi! How was your weekend?"}]
# A code fence: the structural rule (hard:code), whatever the difficulty scorer says.
CODE = [{"role": "user", "content": "Why does this fail?\n```python\nprint(sorted(a) + b)\n```"}]
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
# Tool requests normally go to the autoregressive backend; this rule sends them to diffusion so that the
# tool-call quality checks have something to check.
TOOLS_ON_DIFFUSION = {
    "rules": [{"name": "tools-on-diffusion", "when": {"has_tools": True}, "backend": "diffusion"}]
}


def post(gw, body, headers=None, timeout=10.0):
    h = {"authorization": f"Bearer {gw.key}", **(headers or {})}
    return httpx.post(gw.base_url + "/chat/completions", json=body, headers=h, timeout=timeout)


def events(r):
    return [orjson.loads(e[6:]) for e in r.text.split("\n\n") if e.startswith("data: {")]


def test_low_stakes_to_diffusion_hard_to_autoregressive_with_reasons(gateway):
    chat = post(gateway, {"model": "auto", "messages": CHAT})
    assert chat.headers["x-gateway-backend"] == "diffusion"
    assert chat.headers["x-gateway-route"].startswith("default:score=0.")
    assert "x-gateway-fallback" not in chat.headers
    code = post(gateway, {"model": "auto", "messages": CODE})
    assert code.headers["x-gateway-backend"] == "autoregressive"
    # The structural rule first; the scorer's verdict may follow (hard:score=...) when it agrees.
    assert code.headers["x-gateway-route"].split(",")[0] == "hard:code"
    assert code.json()["model"] == AR_MODEL


def test_alias_and_route_header(gateway):
    assert (
        post(gateway, {"model": "quality", "messages": CHAT}).headers["x-gateway-route"] == "explicit:alias"
    )
    r = post(gateway, {"model": "auto", "messages": CODE}, {"x-gateway-route": "fast"})
    assert r.headers["x-gateway-backend"] == "diffusion" and r.headers["x-gateway-route"] == "explicit:header"


def test_temperature_is_adapted_for_diffusion(gateway, diffusion_sim):
    r = post(gateway, {"model": "auto", "messages": CHAT, "temperature": 0.3})
    assert r.status_code == 200
    assert reasons(r.headers["x-gateway-route"]) == "default:score,adapted:temperature"
    assert "temperature" not in diffusion_sim.state.last_body


def test_speed_tier_sets_the_diffusion_step_cap(gateway, diffusion_sim):
    # Each answer checked first: the simulator is shared, and its last body could be another test's.
    r = post(gateway, {"model": "auto", "messages": CHAT}, {"x-gateway-speed": "fastest"})
    assert r.status_code == 200 and r.headers["x-gateway-backend"] == "diffusion"
    assert diffusion_sim.state.last_body["vllm_xargs"] == {"diffusion_max_steps": 12}
    r = post(
        gateway,
        {"model": "auto", "messages": CHAT, "vllm_xargs": {"diffusion_max_steps": 4}},
        {"x-gateway-speed": "fast"},
    )
    assert r.status_code == 200 and r.headers["x-gateway-backend"] == "diffusion"
    assert diffusion_sim.state.last_body["vllm_xargs"] == {"diffusion_max_steps": 4}  # only ever lowered
    bad = post(gateway, {"model": "auto", "messages": CHAT}, {"x-gateway-speed": "ludicrous"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "unknown_speed_tier"


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("status=500", "status_500"),
        ("status=503", "status_503"),
        ("status=429", "status_429"),
        ("drop_after=0", "broken"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_failure_falls_back_to_the_next_backend(gateway, fault, reason, stream):
    r = post(gateway, {"model": "auto", "messages": CHAT, "stream": stream}, {"x-sim-fault-diffusion": fault})
    assert r.status_code == 200
    assert r.headers["x-gateway-backend"] == "autoregressive"
    assert r.headers["x-gateway-fallback"] == f"diffusion>autoregressive:{reason}"
    assert reasons(r.headers["x-gateway-route"]) == "default:score"


def test_first_byte_timeout_falls_back(make_gateway):
    gw = make_gateway(timeouts={"first_byte": 0.3, "total": 30})
    r = post(
        gw, {"model": "auto", "messages": CHAT, "stream": True}, {"x-sim-fault-diffusion": "stall_after=0"}
    )
    assert r.headers["x-gateway-fallback"] == "diffusion>autoregressive:timeout"
    assert events(r)[0]["model"] == AR_MODEL


def test_connect_error_falls_back(make_gateway):
    # A backend the health probe saw up, gone before the next probe: the request finds its port closed.
    app, _ = create_simulator(
        SimulatorSettings(kind="diffusion", profile="instant", api_key="sim-diffusion-key")
    )
    with ServerThread(app) as doomed:
        gw = make_gateway(routing={"health_interval": 3600}, per_backend={"diffusion": {"url": doomed.url}})
        assert wait_for(lambda: httpx.get(gw.url + "/readyz").json()["backends"]["diffusion"] == "up")
    r = post(gw, {"model": "auto", "messages": CHAT})
    assert r.status_code == 200
    assert r.headers["x-gateway-backend"] == "autoregressive"
    assert r.headers["x-gateway-fallback"] == "diffusion>autoregressive:connect"
    assert reasons(r.headers["x-gateway-route"]) == "default:score"


def test_a_backend_the_probe_found_down_is_skipped(make_gateway):
    gw = make_gateway(per_backend={"diffusion": {"url": "http://127.0.0.1:9"}})
    assert wait_for(lambda: httpx.get(gw.url + "/readyz").json()["backends"]["diffusion"] == "down")
    r = post(gw, {"model": "auto", "messages": CHAT})
    assert r.status_code == 200
    assert r.headers["x-gateway-backend"] == "autoregressive"
    assert "x-gateway-fallback" not in r.headers  # not tried at all
    assert reasons(r.headers["x-gateway-route"]) == "default:score,unavailable:diffusion"


def test_retry_budget_zero_means_no_fallback(make_gateway):
    gw = make_gateway(routing={"retry_budget": 0})
    r = post(gw, {"model": "auto", "messages": CHAT}, {"x-sim-fault-diffusion": "status=500"})
    assert r.status_code == 502 and r.headers["x-gateway-backend"] == "diffusion"


def test_no_retry_after_the_first_byte(gateway, diffusion_sim):
    before = diffusion_sim.state.started
    r = post(
        gateway,
        {"model": "auto", "messages": CODE, "stream": True},
        {"x-sim-fault-autoregressive": "drop_after=2"},
    )
    assert r.headers["x-gateway-backend"] == "autoregressive" and "x-gateway-fallback" not in r.headers
    assert diffusion_sim.state.started == before
    assert r.text.endswith("data: [DONE]\n\n") and "backend_stream_interrupted" in r.text


def test_circuit_breaker_opens_and_requests_skip_the_backend(make_gateway, diffusion_sim):
    gw = make_gateway(routing={"breaker": {"failures": 2, "cooldown": 3600}})
    for _ in range(2):
        r = post(gw, {"model": "auto", "messages": CHAT}, {"x-sim-fault-diffusion": "status=500"})
        assert r.headers["x-gateway-backend"] == "autoregressive"
    before = diffusion_sim.state.started
    r = post(gw, {"model": "auto", "messages": CHAT})
    assert r.headers["x-gateway-backend"] == "autoregressive"
    assert reasons(r.headers["x-gateway-route"]) == "default:score,unavailable:diffusion"
    assert diffusion_sim.state.started == before  # the open breaker kept the request away
    ready = httpx.get(gw.url + "/readyz").json()
    assert ready["backends"]["diffusion"] == "open" and ready["status"] == "ready"
    pinned = post(gw, {"model": "diffusion", "messages": CHAT})
    assert pinned.status_code == 503 and pinned.json()["error"]["code"] == "backend_unavailable"


def test_spillover_under_concurrency(make_gateway, diffusion_sim):
    gw = make_gateway(
        per_backend={
            "diffusion": {"max_concurrency": 1, "expected_latency": 1.0},
            "autoregressive": {"expected_latency": 2.5},
        }
    )
    stalled = {"model": "auto", "messages": CHAT, "stream": True}
    before = diffusion_sim.state.running + diffusion_sim.state.waiting
    # One in flight on a backend that runs one: 2 s to wait, still under 2.5 s elsewhere; two: 3 s.
    # The holders run in a pool and their results are read here: an assertion failing in a plain
    # thread is only a warning, and the test would pass.
    with ThreadPoolExecutor(max_workers=2) as pool:
        holders = [
            pool.submit(post, gw, stalled, {"x-sim-fault-diffusion": "stall_after=0"}, timeout=2)
            for _ in range(2)
        ]
        assert wait_for(lambda: diffusion_sim.state.running + diffusion_sim.state.waiting >= before + 2)
        r = post(gw, {"model": "auto", "messages": CHAT})
        assert r.headers["x-gateway-backend"] == "autoregressive"
        assert reasons(r.headers["x-gateway-route"]) == "default:score,spillover"
        for holder in holders:
            with pytest.raises(httpx.ReadTimeout):
                holder.result()


QUALITY = [
    ("rough=markup", {}, "markup"),
    ("rough=empty", {}, "empty"),
    ("rough=repetition", {}, "repetition"),
    ("rough=tool_json", {"tools": [TOOL]}, "tool_json"),
    ("rough=tool_args", {"tools": [TOOL]}, "tool_json"),
    ("rough=no_tool", {"tools": [TOOL], "tool_choice": "required"}, "tool_required"),
]


@pytest.mark.parametrize(("fault", "extra", "check"), QUALITY, ids=[q[2] + ":" + q[0] for q in QUALITY])
@pytest.mark.parametrize("stream", [False, True])
def test_rough_diffusion_answers_are_rerun_on_autoregressive(make_gateway, fault, extra, check, stream):
    gw = make_gateway(routing=TOOLS_ON_DIFFUSION)
    body = {"model": "auto", "messages": CHAT, "stream": stream, **extra}
    r = post(gw, body, {"x-sim-fault-diffusion": fault})
    assert r.status_code == 200
    assert r.headers["x-gateway-backend"] == "autoregressive"
    assert r.headers["x-gateway-fallback"] == f"diffusion>autoregressive:quality:{check}"
    if stream:
        # Not one byte of the rough answer went out before the switch.
        assert {e["model"] for e in events(r)} == {AR_MODEL}
        assert "<|channel>" not in r.text
    else:
        assert r.json()["model"] == AR_MODEL


def test_good_diffusion_answers_pass_the_checks(make_gateway):
    gw = make_gateway(routing=TOOLS_ON_DIFFUSION)
    for stream in (False, True):
        r = post(gw, {"model": "auto", "messages": CHAT, "stream": stream, "tools": [TOOL]})
        assert r.headers["x-gateway-backend"] == "diffusion" and "x-gateway-fallback" not in r.headers


def test_a_check_switched_off_lets_the_answer_through(make_gateway):
    gw = make_gateway(routing={"quality": {"markup": False}})
    r = post(gw, {"model": "auto", "messages": CHAT}, {"x-sim-fault-diffusion": "rough=markup"})
    assert r.headers["x-gateway-backend"] == "diffusion"
    assert "<|channel>" in r.json()["choices"][0]["message"]["content"]


def test_route_endpoint_explains_without_sending(gateway, diffusion_sim, ar_sim):
    before = (diffusion_sim.state.started, ar_sim.state.started)
    r = httpx.post(
        gateway.base_url + "/gateway/route",
        json={"model": "auto", "messages": CODE},
        headers={"authorization": f"Bearer {gateway.key}"},
    )
    assert r.status_code == 200
    explained = r.json()
    assert explained["reasons"][0] == "hard:code"
    assert {k: v for k, v in explained.items() if k not in ("reasons", "difficulty")} == {
        "backend": "autoregressive",
        "model": AR_MODEL,
        "candidates": ["autoregressive", "diffusion"],
        "drop_temperature": False,
        "queue": False,
        "diffusion_max_steps": None,
    }
    assert set(explained["difficulty"]) == {"score", "threshold", "context", "top_features"}
    assert (diffusion_sim.state.started, ar_sim.state.started) == before
    assert (
        httpx.post(gateway.base_url + "/gateway/route", json={"model": "auto", "messages": CODE}).status_code
        == 401
    )


def test_fallback_headers_on_a_final_error(gateway):
    r = post(gateway, {"model": "auto", "messages": CHAT}, {"x-sim-fault": "status=500"})
    assert r.status_code == 502
    assert r.headers["x-gateway-backend"] == "autoregressive"
    assert r.headers["x-gateway-fallback"] == "diffusion>autoregressive:status_500"
    assert r.json()["error"]["code"] == "backend_error"


def test_queue_mode_waits_for_a_slot_within_bounds(make_gateway, diffusion_sim):
    gw = make_gateway(
        routing={"spillover": {"mode": "queue", "queue_timeout": 30, "max_queue": 1}},
        per_backend={"diffusion": {"max_concurrency": 1}},
    )
    backends = gw.server.app.state.gateway.pool
    stalled = {"model": "auto", "messages": CHAT, "stream": True}
    before = diffusion_sim.state.running + diffusion_sim.state.waiting
    with ThreadPoolExecutor(max_workers=2) as pool:
        # The one slot is taken until this client gives up (its read timeout): the gateway then cancels
        # the upstream request and the slot is free.
        holder = pool.submit(post, gw, stalled, {"x-sim-fault-diffusion": "stall_after=0"}, timeout=3)
        assert wait_for(lambda: diffusion_sim.state.running + diffusion_sim.state.waiting >= before + 1)
        queued = pool.submit(post, gw, {"model": "auto", "messages": CHAT})
        assert wait_for(lambda: backends.waiting == 1)  # it waits in the gateway, not at the backend
        full = post(gw, {"model": "auto", "messages": CHAT})  # max_queue 1: no room for a second
        assert full.status_code == 503 and full.json()["error"]["code"] == "backend_busy"
        assert full.headers.get("x-gateway-backend") == "diffusion"
        with pytest.raises(httpx.ReadTimeout):
            holder.result()
        served = queued.result()  # served once the holder's slot came free, within queue_timeout
    assert served.status_code == 200 and served.headers["x-gateway-backend"] == "diffusion"
    assert "queued" in reasons(served.headers["x-gateway-route"]).split(",")


def test_queue_mode_gives_up_after_its_timeout(make_gateway, diffusion_sim):
    gw = make_gateway(
        routing={"spillover": {"mode": "queue", "queue_timeout": 0.3, "max_queue": 1}},
        per_backend={"diffusion": {"max_concurrency": 1}},
    )
    stalled = {"model": "auto", "messages": CHAT, "stream": True}
    before = diffusion_sim.state.running + diffusion_sim.state.waiting
    with ThreadPoolExecutor(max_workers=1) as pool:
        holder = pool.submit(post, gw, stalled, {"x-sim-fault-diffusion": "stall_after=0"}, timeout=1.5)
        assert wait_for(lambda: diffusion_sim.state.running + diffusion_sim.state.waiting >= before + 1)
        r = post(gw, {"model": "auto", "messages": CHAT})
        assert r.status_code == 503 and r.json()["error"]["code"] == "backend_busy"
        assert r.headers.get("x-gateway-backend") == "diffusion"
        with pytest.raises(httpx.ReadTimeout):
            holder.result()
    # With the slot free again, the queue lets the request through at once.
    assert wait_for(lambda: post(gw, {"model": "auto", "messages": CHAT}).status_code == 200)


def test_a_tiers_backend_restriction_holds_end_to_end(make_gateway):
    gw = make_gateway()
    from tests.support import write_key

    limited = write_key(gw.keys_file, "bot", backends=["diffusion"], route_override=False)
    h = {"authorization": f"Bearer {limited}"}
    assert wait_for(lambda: httpx.get(gw.base_url + "/models", headers=h).status_code == 200)
    r = httpx.post(gw.base_url + "/chat/completions", json={"model": "auto", "messages": CODE}, headers=h)
    assert r.headers["x-gateway-backend"] == "diffusion"  # hard, but this key may only use diffusion
    denied = httpx.post(
        gw.base_url + "/chat/completions",
        json={"model": "auto", "messages": CHAT},
        headers={**h, "x-gateway-route": "quality"},
    )
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "route_not_allowed"


def test_in_flight_counts_return_to_zero(gateway):
    pool = gateway.server.app.state.gateway.pool
    served = []
    for stream in (False, True):
        for model in ("auto", "quality"):
            r = post(gateway, {"model": model, "messages": CHAT, "stream": stream})
            served.append((r.status_code, r.headers["x-gateway-backend"]))
        r = post(  # fails on diffusion, then served by the fallback: a slot taken and given back on each
            gateway,
            {"model": "auto", "messages": CHAT, "stream": stream},
            {"x-sim-fault-diffusion": "status=500"},
        )
        assert r.headers["x-gateway-fallback"] == "diffusion>autoregressive:status_500"
        served.append((r.status_code, r.headers["x-gateway-backend"]))
    assert served == [(200, "diffusion"), (200, "autoregressive"), (200, "autoregressive")] * 2
    assert wait_for(lambda: all(s.in_flight == 0 for s in pool.states.values()))


def test_models_lists_only_the_backends_a_key_may_use(make_gateway):
    gw = make_gateway()
    from tests.support import write_key

    limited = write_key(gw.keys_file, "diffusion-only", backends=["diffusion"])
    h = {"authorization": f"Bearer {limited}"}
    assert wait_for(lambda: httpx.get(gw.base_url + "/models", headers=h).status_code == 200)
    ids = [m["id"] for m in httpx.get(gw.base_url + "/models", headers=h).json()["data"]]
    assert ids == ["auto", DIFFUSION_MODEL]
