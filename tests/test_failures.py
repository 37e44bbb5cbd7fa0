"""Upstream failures before and after the first byte, timeouts, and client disconnects."""

from __future__ import annotations

import socket

import httpx
import orjson
import pytest

from tests.support import AR_MODEL, wait_for

HELLO = [{"role": "user", "content": "Hello there!"}]


def post(gw, body, *, fault=None, timeout=10.0, **headers):
    h = {"authorization": f"Bearer {gw.key}", **headers}
    if fault:
        h["x-sim-fault"] = fault
    return httpx.post(gw.base_url + "/chat/completions", json=body, headers=h, timeout=timeout)


def sse_events(text):
    return [e for e in text.split("\n\n") if e]


@pytest.mark.parametrize(
    ("fault", "status", "code"),
    [
        ("status=500", 502, "backend_error"),
        ("status=503", 503, "backend_error"),
        ("drop_after=0", 502, "backend_error"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_upstream_failure_before_first_byte_is_an_openai_error(gateway, fault, status, code, stream):
    # Pinned to one backend: no fallback, so the failure itself is what the client sees.
    r = post(gateway, {"model": "diffusion", "messages": HELLO, "stream": stream}, fault=fault)
    assert r.status_code == status
    error = r.json()["error"]
    assert error["code"] == code
    assert error["type"] == "server_error"
    assert "Traceback" not in r.text
    assert r.headers["x-gateway-backend"] == "diffusion"


def test_first_byte_timeout_on_a_stream_is_504(make_gateway):
    gw = make_gateway(timeouts={"first_byte": 0.2, "total": 30})
    r = post(gw, {"model": "diffusion", "messages": HELLO, "stream": True}, fault="stall_after=0")
    assert r.status_code == 504
    assert r.json()["error"]["code"] == "backend_timeout"


def test_total_timeout_bounds_a_non_streaming_request(make_gateway):
    gw = make_gateway(timeouts={"first_byte": 0.2, "total": 0.3})
    r = post(gw, {"model": "diffusion", "messages": HELLO}, fault="delay=5")
    assert r.status_code == 504


@pytest.mark.parametrize("client", ["httptools", "httpx"])
@pytest.mark.parametrize(("stream", "status"), [(False, 200), (True, 504)])
def test_an_answer_later_than_the_first_byte_timeout_is_served_only_unstreamed(
    make_gateway, client, stream, status
):
    """vLLM sends nothing of a non-streamed answer, headers included, until the whole answer is ready: its
    bound is the total. The same delay before a stream's first byte is past that stream's deadline."""
    gw = make_gateway(timeouts={"first_byte": 0.1, "total": 30}, server={"upstream_client": client})
    r = post(gw, {"model": "diffusion", "messages": HELLO, "stream": stream}, fault="delay=0.4")
    assert r.status_code == status
    if stream:
        assert r.json()["error"]["code"] == "backend_timeout"
    else:
        assert r.json()["choices"][0]["message"]["content"]


def test_connect_error_is_503(make_gateway, diffusion_sim, ar_sim):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    from prometheus_client import CollectorRegistry

    from gateway.app import create_app
    from tests.support import ServerThread, gateway_settings

    settings = gateway_settings(f"http://127.0.0.1:{port}", ar_sim.url, auth={"allow_anonymous": True})
    with ServerThread(create_app(settings, registry=CollectorRegistry())) as server:
        r = httpx.post(server.url + "/v1/chat/completions", json={"model": "diffusion", "messages": HELLO})
    assert r.status_code == 503
    assert r.json()["error"]["code"] == "backend_unavailable"


@pytest.mark.parametrize("fault", ["drop_after=1", "error_after=1"])
def test_failure_after_first_byte_is_an_in_band_error_then_done(gateway, fault):
    r = post(gateway, {"model": AR_MODEL, "messages": HELLO, "stream": True, "max_tokens": 20}, fault=fault)
    assert r.status_code == 200
    events = sse_events(r.text)
    assert events[-1] == "data: [DONE]"
    error = orjson.loads(events[-2].removeprefix("data: "))
    assert set(error["error"]) == {"message", "type", "param", "code"}
    assert events[0].startswith("data: {") and '"choices"' in events[0]  # the first chunk did go out


def test_idle_timeout_mid_stream_is_an_in_band_error(make_gateway):
    gw = make_gateway(timeouts={"first_byte": 5, "idle": 0.2, "total": 10})
    r = post(gw, {"model": AR_MODEL, "messages": HELLO, "stream": True}, fault="stall_after=2")
    events = sse_events(r.text)
    assert events[-1] == "data: [DONE]"
    assert orjson.loads(events[-2].removeprefix("data: "))["error"]["code"] == "backend_stream_interrupted"
    # The request is counted once its stream has closed, just after the client read the last byte.
    assert wait_for(
        lambda: (
            gw.metric(
                "gateway_requests_total", backend="autoregressive", outcome="upstream_timeout", stream="true"
            )
            == 1
        )
    )


def test_backend_refusing_the_gateways_key_is_502_not_401(make_gateway, diffusion_sim, ar_sim):
    from prometheus_client import CollectorRegistry

    from gateway.app import create_app
    from tests.support import ServerThread, gateway_settings

    # No api_key configured for the backends: the simulators (started with --api-key) refuse.
    settings = gateway_settings(diffusion_sim.url, ar_sim.url, auth={"allow_anonymous": True})
    with ServerThread(create_app(settings, registry=CollectorRegistry())) as server:
        r = httpx.post(server.url + "/v1/chat/completions", json={"model": "diffusion", "messages": HELLO})
    assert r.status_code == 502
    assert r.json()["error"]["code"] == "backend_auth"


def _cancelled_after(sim, action):
    before = sim.state.cancelled
    action()
    return wait_for(lambda: sim.state.cancelled == before + 1, within=5)


@pytest.mark.parametrize("stream", [False, True])
def test_client_disconnect_while_waiting_closes_upstream(gateway, diffusion_sim, stream):
    def hang_up():
        with pytest.raises(httpx.ReadTimeout):
            post(
                gateway,
                {"model": "auto", "messages": HELLO, "stream": stream},
                fault="stall_after=0",
                timeout=0.3,
            )

    assert _cancelled_after(diffusion_sim, hang_up)
    assert wait_for(
        lambda: (
            gateway.metric(
                "gateway_requests_total",
                backend="diffusion",
                outcome="disconnected",
                stream=str(stream).lower(),
            )
            == 1
        )
    )


def test_client_disconnect_mid_stream_closes_upstream(gateway, ar_sim):
    def read_then_hang_up():
        headers = {"authorization": f"Bearer {gateway.key}", "x-sim-fault": "stall_after=2"}
        body = {"model": AR_MODEL, "messages": HELLO, "stream": True}
        with httpx.stream("POST", gateway.base_url + "/chat/completions", json=body, headers=headers) as r:
            for line in r.iter_lines():
                if line.startswith("data: {"):
                    break  # one chunk arrived; now leave with the stream stalled upstream

    assert _cancelled_after(ar_sim, read_then_hang_up)
