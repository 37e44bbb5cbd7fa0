"""Metric values checked exactly after known traffic (a fresh registry per gateway), label cardinality,
the request log, and the backends' own metrics scraped through the gateway."""

from __future__ import annotations

import asyncio
import logging
import math
import uuid

import httpx
import pytest

from tests.support import AR_MODEL, wait_for

CHAT = [{"role": "user", "content": "Hi! How was your weekend?"}]
# A code fence: routed by the structural rule (hard:code), whatever the scorer says.
CODE = [{"role": "user", "content": "Why does this fail?\n```python\nprint(sorted(a) + b)\n```"}]


def post(gw, body, headers=None, key=None):
    h = {"authorization": f"Bearer {key or gw.key}", **(headers or {})}
    return httpx.post(gw.base_url + "/chat/completions", json=body, headers=h, timeout=10)


def settle(gw, name, expected, **labels):
    """Metrics are recorded when a request ends, just after its last byte: wait for them."""
    assert wait_for(lambda: gw.metric(name, **labels) == expected), (name, labels, gw.metric(name, **labels))


def test_a_diffusion_request_is_counted_with_its_sampler_and_canvases(gateway):
    usage = post(gateway, {"model": "auto", "messages": CHAT}).json()["usage"]
    tokens = usage["completion_tokens"]
    labels = {
        "backend": "diffusion",
        "sampler": "entropy_bound",
        "entropy_bound": "0.1",
        "canvas_length": "256",
        "max_steps": "48",
    }
    settle(
        gateway,
        "gateway_requests_total",
        1,
        backend="diffusion",
        route="default:score",
        outcome="ok",
        stream="false",
        principal="alice",
    )
    settle(gateway, "gateway_diffusion_requests_total", 1, **labels)
    assert gateway.metric("gateway_diffusion_canvases_count", **labels) == 1
    assert gateway.metric("gateway_diffusion_canvases_sum", **labels) == math.ceil(tokens / 256)
    fill = tokens / (math.ceil(tokens / 256) * 256)
    assert gateway.metric("gateway_diffusion_canvas_fill_ratio_sum", **labels) == pytest.approx(fill)
    assert gateway.metric("gateway_tokens_total", backend="diffusion", type="completion") == tokens
    assert (
        gateway.metric("gateway_tokens_total", backend="diffusion", type="prompt") == usage["prompt_tokens"]
    )
    assert gateway.metric("gateway_principal_tokens_total", principal="alice", type="completion") == tokens
    bucket = "65-256" if 65 <= tokens <= 256 else "17-64"
    assert gateway.metric("gateway_output_tokens_per_second_count", backend="diffusion", length=bucket) == 1
    assert gateway.metric("gateway_request_duration_seconds_count", backend="diffusion", stream="false") == 1
    assert (
        gateway.metric("gateway_time_to_first_byte_seconds_count", backend="diffusion", stream="false") == 1
    )


def test_the_per_request_step_cap_is_the_label(gateway):
    post(gateway, {"model": "auto", "messages": CHAT}, {"x-gateway-speed": "fastest"})
    post(
        gateway,
        {
            "model": "auto",
            "messages": CHAT,
            "vllm_xargs": {"diffusion_max_steps": 5, "diffusion_canvas_length": 128},
        },
    )
    settle(gateway, "gateway_diffusion_requests_total", 1, max_steps="12", canvas_length="256")
    settle(gateway, "gateway_diffusion_requests_total", 1, max_steps="5", canvas_length="128")


def test_streams_reasoning_and_routes_are_counted(gateway):
    body = {
        "model": "auto",
        "messages": CODE,
        "stream": True,
        "chat_template_kwargs": {"enable_thinking": True},
    }
    r = post(gateway, body)
    assert r.status_code == 200
    settle(gateway, "gateway_requests_total", 1, backend="autoregressive", route="hard:code", stream="true")
    settle(gateway, "gateway_route_reasons_total", 1, backend="autoregressive", reason="hard:thinking")
    assert gateway.metric("gateway_tokens_total", backend="autoregressive", type="reasoning") > 0
    assert gateway.metric("gateway_diffusion_requests_total") == 0  # not a diffusion request


def test_fallbacks_and_upstream_errors(gateway):
    post(gateway, {"model": "auto", "messages": CHAT}, {"x-sim-fault-diffusion": "status=500"})
    post(gateway, {"model": "auto", "messages": CHAT}, {"x-sim-fault-diffusion": "rough=markup"})
    settle(
        gateway,
        "gateway_fallbacks_total",
        1,
        from_backend="diffusion",
        to_backend="autoregressive",
        reason="status_500",
    )
    settle(gateway, "gateway_fallbacks_total", 1, reason="quality:markup")
    assert gateway.metric("gateway_upstream_errors_total", backend="diffusion", kind="status_5xx") == 1
    # A rough answer is a fallback, not a failed attempt: the 500 is the diffusion backend's only error, of
    # any kind (the kind label is clamped to a fixed set, so asking for kind="quality:markup" proves nothing).
    assert gateway.metric("gateway_upstream_errors_total", backend="diffusion") == 1


def test_auth_failures_by_reason(gateway):
    httpx.get(gateway.base_url + "/models")
    httpx.get(gateway.base_url + "/models", headers={"authorization": "Bearer gw-nope"})
    assert gateway.metric("gateway_auth_failures_total", reason="missing") == 1
    assert gateway.metric("gateway_auth_failures_total", reason="invalid") == 1


def test_auth_failure_log_lines_are_sampled_per_reason_and_say_how_many_were_left_out():
    from gateway.record import RequestRecord
    from gateway.telemetry.logs import AuthFailureLog

    now = [100.2]
    sampler = AuthFailureLog(2, clock=lambda: now[0])
    lines: list[dict[str, object]] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.fields)  # type: ignore[attr-defined]

    def fail(reason: str | None, n: int = 1) -> None:
        for _ in range(n):
            record = RequestRecord(request_id="r", method="POST", path="/v1/chat/completions", started=0.0)
            record.status, record.auth_failure = 401, reason
            sampler.finish(record, 1.0)

    handler = Capture()
    auth = logging.getLogger("gateway.auth")
    auth.addHandler(handler)
    old_level = auth.level
    auth.setLevel(logging.INFO)
    try:
        fail("invalid", 10)  # two lines in this second, eight left out
        fail("expired", 3)  # another reason has its own two
        fail(None, 5)  # an accepted credential: no line
        fail("some-new-code")  # an unknown reason: counted as "other", as in the metric
        now[0] = 101.0
        fail("invalid")  # a new second: a line, saying how many the last one left out
        fail("invalid", 2)
    finally:
        auth.removeHandler(handler)
    assert [(line["reason"], line["suppressed"]) for line in lines] == [
        ("invalid", 0),
        ("invalid", 0),
        ("expired", 0),
        ("expired", 0),
        ("other", 0),
        ("invalid", 8),
        ("invalid", 0),
    ]
    assert all(line["status"] == 401 and line["path"] == "/v1/chat/completions" for line in lines)
    quiet = AuthFailureLog(0)  # 0: counted in the metrics only
    lines.clear()
    auth.addHandler(handler)
    try:
        record = RequestRecord(request_id="r", method="GET", path="/v1/models", started=0.0)
        record.auth_failure = "invalid"
        quiet.finish(record, 1.0)
    finally:
        auth.removeHandler(handler)
        auth.setLevel(old_level)
    assert lines == []


def test_a_refused_credential_has_a_sampled_line_with_its_reason_and_no_request_line(make_gateway, caplog):
    """Many 401s: every one counted, each reason logged, never a line per request, no token in any line,
    and the client told only that its credential was refused."""
    import time

    import jwt

    secret = "0123456789abcdef0123456789abcdef-sampled-401"
    gw = make_gateway(
        auth={
            "keys_file": None,
            "jwt": {"issuer": "i", "audience": "a", "algorithms": ["HS256"], "secret": secret},
        },
        telemetry={"auth_failure_logs_per_second": 1},
    )
    now = int(time.time())
    tokens = {
        "expired": jwt.encode({"iss": "i", "aud": "a", "sub": "x", "exp": now - 60}, secret, "HS256"),
        "audience": jwt.encode({"iss": "i", "aud": "b", "sub": "x", "exp": now + 60}, secret, "HS256"),
        "issuer": jwt.encode({"iss": "j", "aud": "a", "sub": "x", "exp": now + 60}, secret, "HS256"),
        "signature": jwt.encode({"iss": "i", "aud": "a", "sub": "x", "exp": now + 60}, secret[::-1], "HS256"),
        "missing_claim": jwt.encode({"iss": "i", "aud": "a", "exp": now + 60}, secret, "HS256"),
    }
    caplog.set_level(logging.INFO)
    bodies = []
    for _ in range(20):
        for token in tokens.values():
            r = post(gw, {"model": "auto", "messages": CHAT}, key=token)
            assert r.status_code == 401
            bodies.append(r.text)
    for reason in tokens:
        settle(gw, "gateway_auth_failures_total", 20, reason=reason)
    lines = [
        r.fields
        for r in caplog.records
        if r.name == "gateway.auth" and r.getMessage() == "authentication failed"
    ]
    assert {line["reason"] for line in lines} == set(tokens)
    # One line a second for each reason: fewer than the 100 failures, unless every request took a second.
    assert len(lines) < 100 and sum(int(line["suppressed"]) for line in lines) <= 100 - len(lines)
    assert not [r for r in caplog.records if r.name == "gateway.request" and r.fields.get("status") == 401]
    logged = "\n".join(f"{r.getMessage()} {getattr(r, 'fields', '')}" for r in caplog.records)
    for token in tokens.values():
        assert token not in logged and token.split(".")[2] not in logged
    assert set(bodies) == {
        '{"error":{"message":"Invalid bearer token.","type":"invalid_request_error","param":null,'
        '"code":"invalid_api_key"}}'
    }


def test_backend_state_gauges(gateway):
    text = gateway.scrape()
    assert 'gateway_backend_up{backend="diffusion"} 1.0' in text
    assert 'gateway_backend_in_flight{backend="autoregressive"} 0.0' in text
    assert 'gateway_backend_breaker_open{backend="diffusion"} 0.0' in text


def series(gw) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    return {
        (s.name, tuple(sorted(s.labels.items())))
        for family in gw.registry.collect()
        for s in family.samples
        if s.name.startswith("gateway_") and not s.name.startswith("gateway_backend_")
    }


def test_bogus_models_keys_and_routes_do_not_grow_the_series(gateway):
    def noise(i: int) -> None:
        post(gateway, {"model": f"bogus-{uuid.uuid4()}", "messages": CHAT})
        post(gateway, {"model": "auto", "messages": CHAT}, key=f"gw-{uuid.uuid4()}")
        post(gateway, {"model": "auto", "messages": CHAT}, {"x-gateway-route": f"r-{uuid.uuid4()}"})
        post(gateway, {"model": "auto", "messages": CHAT}, {"x-gateway-speed": f"s-{uuid.uuid4()}"})
        httpx.post(gateway.base_url + f"/{uuid.uuid4()}", headers={"x-request-id": str(uuid.uuid4())})

    noise(0)
    assert wait_for(lambda: gateway.metric("gateway_requests_total") >= 5)
    before = series(gateway)
    for i in range(30):
        noise(i)
    assert wait_for(lambda: gateway.metric("gateway_requests_total") >= 5 * 31)
    after = series(gateway)
    assert after == before
    text = gateway.scrape()
    assert "bogus-" not in text and "gw-" not in text


def request_lines(caplog):
    return [getattr(r, "fields", {}) for r in caplog.records if r.name == "gateway.request"]


def test_request_log_line(make_gateway, caplog):
    caplog.set_level(logging.INFO, logger="gateway.request")
    gw = make_gateway()
    r = post(gw, {"model": "auto", "messages": CHAT}, {"x-request-id": "log-1"})
    usage = r.json()["usage"]
    assert wait_for(lambda: any(f.get("client_request_id") == "log-1" for f in request_lines(caplog)))
    line = next(f for f in request_lines(caplog) if f.get("client_request_id") == "log-1")
    assert line["principal"] == "alice" and line["backend"] == "diffusion"
    assert [r.partition("=")[0] for r in line["route"]] == ["default:score"] and 0 <= line[
        "route_score"
    ] < 0.5
    assert line["status"] == 200 and line["outcome"] == "ok"
    assert line["completion_tokens"] == usage["completion_tokens"]
    assert line["sampler"] == "entropy_bound" and line["entropy_bound"] == 0.1 and line["max_steps"] == 48
    assert line["canvases"] == math.ceil(usage["completion_tokens"] / 256)
    assert "ttfb_ms" in line and "duration_ms" in line
    assert "content" not in line and "weekend" not in str(line)

    post(
        gw,
        {"model": "auto", "messages": CHAT},
        {"x-sim-fault-diffusion": "status=503", "x-request-id": "log-2"},
    )
    assert wait_for(lambda: any(f.get("client_request_id") == "log-2" for f in request_lines(caplog)))
    line = next(f for f in request_lines(caplog) if f.get("client_request_id") == "log-2")
    assert line["fallback"] == ["diffusion>autoregressive:status_503"] and line["backend"] == "autoregressive"
    assert "sampler" not in line


@pytest.mark.parametrize("stream", [False, True])
def test_content_is_logged_only_when_enabled(make_gateway, caplog, stream):
    caplog.set_level(logging.INFO, logger="gateway.request")
    gw = make_gateway(telemetry={"log_content": True, "log_content_max_chars": 500})
    r = post(
        gw, {"model": AR_MODEL, "messages": CHAT, "stream": stream, "max_tokens": 5}, {"x-request-id": "c-1"}
    )
    assert r.status_code == 200
    assert wait_for(lambda: any(f.get("client_request_id") == "c-1" for f in request_lines(caplog)))
    line = next(f for f in request_lines(caplog) if f.get("client_request_id") == "c-1")
    assert "weekend" in line["content"]["prompt"]
    assert line["content"]["completion"]


async def test_scraped_backend_metrics_give_steps_per_canvas(diffusion_sim):
    from gateway.backends.settings import BreakerSettings
    from gateway.backends.state import BackendPool
    from gateway.telemetry.backends import BackendCollector, scrape_once
    from gateway.upstream import build_upstream
    from gateway.upstream.settings import BackendSettings

    backend = BackendSettings(
        name="diffusion", kind="diffusion", url=diffusion_sim.url, model="m", api_key="sim-diffusion-key"
    )
    pool = BackendPool([backend], BreakerSettings())
    upstream = build_upstream([backend])
    snapshots: dict = {}
    try:
        await scrape_once(pool, upstream, snapshots)
        async with httpx.AsyncClient() as client:
            for _ in range(3):
                await client.post(
                    diffusion_sim.url + "/v1/chat/completions",
                    json={"model": "nvidia/diffusiongemma-26B-A4B-it-NVFP4", "messages": CHAT},
                    headers={"authorization": "Bearer sim-diffusion-key"},
                )
        await asyncio.sleep(0)
        await scrape_once(pool, upstream, snapshots)
    finally:
        await upstream.aclose()
    snap = snapshots["diffusion"]
    assert snap.gauges["running"] == 0 and "kv_cache" in snap.gauges
    assert snap.steps_per_canvas is not None and 1 <= snap.steps_per_canvas <= 48
    assert snap.tokens_per_step is not None and snap.tokens_per_step > 0
    names = {m.name for m in BackendCollector(pool, snapshots).collect()}
    assert {"gateway_backend_diffusion_steps_per_canvas", "gateway_backend_requests_waiting"} <= names


def test_the_request_log_fast_path_writes_the_formatter_s_line():
    """log_request writes straight to the stream under the gateway's own logging configuration; the line
    must be the one the JSON formatter writes for a regular LogRecord (the path any other setup takes)."""
    import io
    import json
    import time

    from gateway.record import DiffusionRun, RequestRecord, Usage
    from gateway.telemetry.logs import configure_logging, log_request, request_log

    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    stream = io.StringIO()
    try:
        configure_logging("info")
        root.handlers[0].setStream(stream)  # type: ignore[attr-defined]
        record = RequestRecord(
            request_id="r-1",
            method="POST",
            path="/v1/chat/completions",
            started=time.perf_counter(),
            principal="alice",
            backend="diffusion",
            route_reasons=("default",),
            status=200,
            outcome="ok",
            ttfb=0.0012,
            usage=Usage(10, 300, 0),
            diffusion=DiffusionRun("entropy_bound", 0.1, 256, 48),
            fallbacks=[("diffusion", "autoregressive", "quality:empty")],
        )
        log_request(record, record.started + 0.5)  # fast path
        request_log.addFilter(lambda r: True)  # any filter: the regular LogRecord path
        try:
            log_request(record, record.started + 0.5)
        finally:
            request_log.filters.clear()
    finally:
        root.handlers[:], root.level = saved
    fast, regular = (json.loads(line) for line in stream.getvalue().splitlines())
    assert fast.pop("ts")[-1] == regular.pop("ts")[-1] == "Z"
    assert list(fast.items()) == list(regular.items())  # same keys, same order, same values
    assert fast["canvases"] == 2 and fast["fallback"] == ["diffusion>autoregressive:quality:empty"]
