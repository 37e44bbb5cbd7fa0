"""OpenTelemetry traces, exported to a real OTLP/HTTP receiver started by the test: span
names, GenAI and gateway attributes, parent/child links, the traceparent the simulated backend saw,
incoming trace context honoured only when configured, and no secret or prompt text on any span."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest
from sqlalchemy import select

from gateway.usage.schema import usage_records
from gateway.usage.store import UsageStore
from tests.otlp_receiver import OTLPReceiver, Span
from tests.support import AR_MODEL, DIFFUSION_MODEL, wait_for

SERVER, CLIENT = 2, 3  # opentelemetry.proto.trace.v1.Span.SpanKind
STATUS_ERROR = 2
CHAT = [{"role": "user", "content": "Hi! How was your weekend?"}]
CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
CLIENT_PARENT = "b7ad6b7169203331"


@pytest.fixture
def receiver():
    with OTLPReceiver() as r:
        yield r


def traced(make_gateway, receiver, **tracing):
    return make_gateway(
        telemetry={
            "tracing": {"enabled": True, "endpoint": receiver.url, "export_interval": 0.05, **tracing}
        },
    )


def post(gw, body, headers=None):
    h = {"authorization": f"Bearer {gw.key}", **(headers or {})}
    return httpx.post(gw.base_url + "/chat/completions", json=body, headers=h, timeout=10)


def request_span(receiver: OTLPReceiver, response: httpx.Response) -> Span:
    request_id = response.headers["x-request-id"]

    def found() -> list[Span]:
        return [s for s in receiver.spans if s.attributes.get("gateway.request_id") == request_id]

    assert wait_for(lambda: len(found()) == 1), receiver.spans
    return found()[0]


def children(receiver: OTLPReceiver, parent: Span, count: int) -> list[Span]:
    def found() -> list[Span]:
        return [s for s in receiver.trace(parent.trace_id) if s.parent_span_id == parent.span_id]

    assert wait_for(lambda: len(found()) == count), receiver.trace(parent.trace_id)
    return sorted(found(), key=lambda s: s.attributes["gateway.attempt"])


def test_a_fallback_is_one_trace_with_a_span_per_attempt_and_the_backend_joins_it(
    make_gateway, receiver, ar_sim
):
    gw = traced(make_gateway, receiver)
    response = post(
        gw,
        {"model": "auto", "messages": CHAT, "max_tokens": 50},
        {"x-sim-fault-diffusion": "status=500", "x-request-id": "client-7"},
    )
    assert response.status_code == 200
    usage = response.json()["usage"]
    root = request_span(receiver, response)
    # The span is known by the gateway's id; the client's own id rides along beside it.
    assert root.attributes["gateway.client_request_id"] == "client-7"
    assert root.name == "chat auto" and root.kind == SERVER and root.parent_span_id == ""
    assert root.service == "diffusion-gateway"
    a = root.attributes
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == "auto" and a["gen_ai.response.model"] == AR_MODEL
    assert a["gen_ai.request.max_tokens"] == 50
    assert a["gen_ai.usage.input_tokens"] == usage["prompt_tokens"]
    assert a["gen_ai.usage.output_tokens"] == usage["completion_tokens"]
    assert a["gateway.backend"] == "autoregressive" and a["gateway.outcome"] == "ok"
    assert a["gateway.fallback"] == ["diffusion>autoregressive:status_500"]
    assert a["gateway.route.reasons"] == response.headers["x-gateway-route"].split(",")
    assert a["http.response.status_code"] == 200 and a["gateway.backend_seconds"] > 0

    failed, answered = children(receiver, root, 2)
    assert failed.name == f"chat {DIFFUSION_MODEL}" and failed.kind == CLIENT
    assert failed.attributes["gateway.backend"] == "diffusion"
    assert failed.attributes["gateway.outcome"] == "status_500" and failed.status_code == STATUS_ERROR
    assert answered.name == f"chat {AR_MODEL}" and answered.attributes["gateway.outcome"] == "ok"
    assert answered.attributes["gen_ai.request.model"] == AR_MODEL
    # The backend that answered was handed this trace, with its attempt's span as the parent: vLLM's
    # own spans (--otlp-traces-endpoint) join the trace there.
    version, trace_id, parent_id, flags = ar_sim.state.last_headers["traceparent"].split("-")
    assert (version, trace_id, parent_id) == ("00", root.trace_id, answered.span_id)
    assert int(flags, 16) & 1  # sampled


def test_a_diffusion_stream_carries_its_sampler_and_canvas_fill(make_gateway, receiver, diffusion_sim):
    gw = traced(make_gateway, receiver)
    response = post(gw, {"model": "auto", "messages": CHAT, "stream": True})
    assert response.status_code == 200 and response.headers["x-gateway-backend"] == "diffusion"
    root = request_span(receiver, response)
    a = root.attributes
    assert a["gateway.stream"] is True and a["gen_ai.response.model"] == DIFFUSION_MODEL
    assert a["gateway.diffusion.sampler"] == "entropy_bound" and a["gateway.diffusion.entropy_bound"] == 0.1
    assert a["gateway.diffusion.canvas_length"] == 256
    tokens = a["gen_ai.usage.output_tokens"]
    assert tokens > 0 and a["gateway.diffusion.canvas_fill"] == pytest.approx(tokens / 256, abs=1e-4)
    [attempt] = children(receiver, root, 1)
    assert attempt.attributes["gateway.outcome"] == "ok"
    assert diffusion_sim.state.last_headers["traceparent"].split("-")[2] == attempt.span_id


def test_a_clients_traceparent_is_ignored_unless_trusted(make_gateway, receiver):
    incoming = {"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_PARENT}-01"}
    gw = traced(make_gateway, receiver)
    untrusted = request_span(receiver, post(gw, {"model": "auto", "messages": CHAT}, incoming))
    assert untrusted.trace_id != CLIENT_TRACE and untrusted.parent_span_id == ""

    trusting = traced(make_gateway, receiver, trust_incoming=True)
    trusting.key = gw.key  # the same key file: the key was written once
    joined = request_span(receiver, post(trusting, {"model": "auto", "messages": CHAT}, incoming))
    assert joined.trace_id == CLIENT_TRACE and joined.parent_span_id == CLIENT_PARENT


def test_no_secret_or_prompt_reaches_spans_or_the_ledger(make_gateway, receiver, tmp_path):
    marker = "Zanzibar-7f3a-secret-plan"
    body = {"model": "auto", "messages": [{"role": "user", "content": f"Tell nobody about {marker}."}]}
    gw = traced(make_gateway, receiver)
    for stream in (False, True):
        response = post(gw, {**body, "stream": stream})
        assert response.status_code == 200
        children(receiver, request_span(receiver, response), 1)
    gw.server.__exit__()  # flushes the ledger
    spans = repr([(s.name, s.attributes) for s in receiver.spans])
    store = UsageStore(os.environ["GATEWAY_USAGE__URL"])
    with store.engine.connect() as conn:
        ledger = repr(conn.execute(select(usage_records)).all())
    store.dispose()
    assert "alice" in ledger and "alice" in spans  # the key's name, its id, is there
    for text in (spans, ledger):
        assert gw.key not in text and gw.key[3:] not in text
        assert "Bearer" not in text and "authorization" not in text.lower()
        assert marker not in text
        assert "sim-diffusion-key" not in text  # nor the backend's own key

    # Only telemetry.capture_content puts the prompt on the request span.
    receiver.spans.clear()
    captured = make_gateway(
        telemetry={
            "capture_content": True,
            "tracing": {"enabled": True, "endpoint": receiver.url, "export_interval": 0.05},
        }
    )
    captured.key = gw.key
    root = request_span(receiver, post(captured, body))
    assert marker in root.attributes["gen_ai.input.messages"]
    assert captured.key not in repr(root.attributes)


def test_tracing_off_loads_neither_the_sdk_nor_the_gateways_tracing():
    # FastAPI itself imports opentelemetry-api (its native telemetry, inert without a global provider,
    # which the gateway never sets): what tracing off must not load is the SDK, the exporter, and ours.
    code = """
import sys
from gateway.app import create_app
from gateway.config import Settings
settings = Settings(
    backends=[{"name": "a", "kind": "autoregressive", "url": "http://127.0.0.1:9", "model": "m"}],
    auth={"allow_anonymous": True},
    usage={"enabled": False},
)
create_app(settings)
loaded = sorted(
    m for m in sys.modules
    if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter")) or m == "gateway.telemetry.tracing"
)
print(loaded)
sys.exit(1 if loaded else 0)
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
