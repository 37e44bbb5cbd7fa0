"""The edge: deadlines for receiving a request, the connection cap, the operator listener,
request encodings and the forwarded-header allowlist, against real servers on loopback.

Deadlines are short here (edge settings in each test's config); the only timing assertions are "closed
before the deadline plus a generous margin". When each deadline passes, to a tick of the edge's timer, is
checked on a clock the test moves (test_edge_protocol.py). Slow clients are raw sockets.
"""

from __future__ import annotations

import gzip
import socket
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from prometheus_client import CollectorRegistry

from gateway.app import create_app
from gateway.simulator import SimulatorSettings, create_simulator
from tests.conftest import Sim, sample_sum
from tests.support import ServerThread, TwoListeners, gateway_settings, wait_for, write_key

CHAT = {"model": "google/gemma-4-26B-A4B-it", "messages": [{"role": "user", "content": "Hello"}]}
# Deadline plus this is the latest a connection may still be open: generous for a busy machine.
MARGIN = 5.0
FAST = {"header_timeout": 0.3, "body_timeout": 0.5}


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.settimeout(10)
    return sock


def _read_until_closed(sock: socket.socket, within: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when it closed (monotonic)."""
    sock.settimeout(within)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data, time.monotonic()


def _post(url: str, key: str, content: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(
        url + "/v1/chat/completions",
        content=content,
        headers={"authorization": f"Bearer {key}", "content-type": "application/json", **(headers or {})},
        timeout=10,
    )


# ---- deadlines -----------------------------------------------------------------------------------------


def test_a_slow_head_is_closed_with_408(make_gateway):
    gw = make_gateway(edge=FAST)
    started = time.monotonic()
    sock = _connect(gw.server.port)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Ty")
    data, closed = _read_until_closed(sock, 0.3 + MARGIN)
    sock.close()
    assert data.startswith(b"HTTP/1.1 408 ")
    assert b'"code":"request_timeout"' in data
    assert closed - started < 0.3 + MARGIN
    assert wait_for(lambda: gw.metric("gateway_connections_closed_by_deadline_total", phase="header") == 1)


def test_a_connection_that_never_sends_is_closed(make_gateway):
    gw = make_gateway(edge=FAST)
    started = time.monotonic()
    sock = _connect(gw.server.port)
    data, closed = _read_until_closed(sock, 0.3 + MARGIN)
    sock.close()
    assert data.startswith(b"HTTP/1.1 408 ")
    assert closed - started < 0.3 + MARGIN


def test_a_slow_body_is_closed_with_408(make_gateway):
    gw = make_gateway(edge=FAST)
    sock = _connect(gw.server.port)
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {gw.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"model": "')
    sent = time.monotonic()
    data, closed = _read_until_closed(sock, 0.5 + MARGIN)
    sock.close()
    assert data.startswith(b"HTTP/1.1 408 ")
    assert closed - sent < 0.5 + MARGIN
    assert wait_for(lambda: gw.metric("gateway_connections_closed_by_deadline_total", phase="body") == 1)
    assert gw.metric("gateway_connections_closed_by_deadline_total", phase="header") == 0
    # The app never started for a body that did not arrive (gateway/edge/protocol.py, _start_asgi_task):
    # no request in the log or the metrics, only the edge's count above. A complete request afterwards is
    # the only one counted (the app used to record the slow one as a 499).
    hello = b'{"model": "auto", "messages": [{"role": "user", "content": "hi"}]}'
    assert _post(gw.url, gw.key, hello).status_code == 200
    assert wait_for(lambda: gw.metric("gateway_requests_total") == 1)
    assert gw.metric("gateway_requests_total", outcome="ok") == 1


def test_a_kept_alive_connection_serves_its_requests_then_is_closed_when_idle(make_gateway):
    """Left idle, it is closed by the keep-alive timeout with nothing sent. That each request has a head
    deadline of its own, from its first byte, is checked on a moved clock (test_edge_protocol.py)."""
    gw = make_gateway(edge={**FAST, "keepalive_timeout": 0.4})
    # One raw connection, so that a reconnect cannot stand in for the connection living on.
    sock = _connect(gw.server.port)
    for _ in range(4):
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, "the connection was closed between requests"
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 ")
    assert gw.metric("gateway_connections_closed_by_deadline_total") == 0
    data, _ = _read_until_closed(sock, 0.4 + MARGIN)
    sock.close()
    assert data == b""


@pytest.fixture
def slow_ar_sim() -> Iterator[Sim]:
    """An autoregressive backend at the published DGX Spark pace (14 tokens/s): 20 tokens stream for
    over a second."""
    app, state = create_simulator(SimulatorSettings(kind="autoregressive", profile="dgx-spark"))
    with ServerThread(app) as server:
        yield Sim(server, state)


def test_a_streamed_answer_longer_than_every_deadline_is_not_cut(tmp_path, diffusion_sim, slow_ar_sim):
    key = write_key(tmp_path / "keys.yaml", "alice")
    settings = gateway_settings(
        diffusion_sim.url,
        slow_ar_sim.url,
        auth={"keys_file": str(tmp_path / "keys.yaml")},
        edge={"header_timeout": 0.2, "body_timeout": 0.3, "keepalive_timeout": 0.3},
    )
    registry = CollectorRegistry()
    with ServerThread(create_app(settings, registry=registry)) as gw:
        body = {**CHAT, "stream": True, "max_tokens": 20}
        started = time.monotonic()
        events = []
        with httpx.stream(
            "POST",
            gw.url + "/v1/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {key}"},
            timeout=30,
        ) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if line.startswith("data: "):
                    events.append(line)
        lasted = time.monotonic() - started
    assert events[-1] == "data: [DONE]"
    assert lasted > 0.3 * 2  # it really outlived the deadlines (not a timing bound on the gateway)
    assert sample_sum(registry, "gateway_connections_closed_by_deadline_total") == 0
    assert sample_sum(registry, "gateway_requests_total", outcome="ok", stream="true") == 1


# ---- the connection cap and the operator listener -----------------------------------------------------


def _capped_gateway(tmp_path: Path, diffusion_sim: Sim, ar_sim: Sim, **edge: Any) -> tuple[Any, Any]:
    write_key(tmp_path / "keys.yaml", "alice")
    settings = gateway_settings(
        diffusion_sim.url,
        ar_sim.url,
        auth={"keys_file": str(tmp_path / "keys.yaml")},
        edge={"header_timeout": 30, "body_timeout": 30, **edge},
    )
    registry = CollectorRegistry()
    return create_app(settings, registry=registry), registry


def test_the_cap_refuses_the_extra_connection_and_serves_the_others(tmp_path, diffusion_sim, ar_sim):
    app, registry = _capped_gateway(tmp_path, diffusion_sim, ar_sim, max_connections=3, operator_port=0)
    with TwoListeners(app) as gw:
        port = gw.port("main")
        held = [_connect(port) for _ in range(3)]
        assert wait_for(lambda: sample_sum(registry, "gateway_connections_open", listener="main") == 3)
        extra = _connect(port)
        data, _ = _read_until_closed(extra, MARGIN)
        extra.close()
        # Refused before anything is read: the client sent nothing, so the 503 arrives before the close.
        assert data.startswith(b"HTTP/1.1 503 ")
        assert sample_sum(registry, "gateway_connections_refused_total", listener="main") == 1
        # The established connections still work.
        for sock in held:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        # The operator listener answers health and metrics while the main one is full, and nothing else.
        operator = f"http://127.0.0.1:{gw.port('operator')}"
        assert httpx.get(operator + "/readyz", timeout=5).status_code == 200
        metrics = httpx.get(operator + "/metrics", timeout=5)
        assert 'gateway_connections_refused_total{listener="main"} 1.0' in metrics.text
        assert httpx.post(operator + "/v1/chat/completions", json=CHAT, timeout=5).status_code == 404
        for sock in held:
            sock.close()
        # Closed connections make room again.
        assert wait_for(lambda: sample_sum(registry, "gateway_connections_open", listener="main") == 0)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200


def test_the_derived_cap_leaves_room_for_upstream_sockets():
    from gateway.edge.settings import EdgeSettings, file_limit

    assert EdgeSettings(max_connections=10).connection_cap(upstream_pool=300) == 10
    derived = EdgeSettings().connection_cap(upstream_pool=300)
    assert derived == max(64, file_limit() - 300 - 128)


def test_two_workers_close_slow_clients_and_share_the_operator_listener(tmp_path, diffusion_sim, ar_sim):
    from tests.test_limits import GatewayProcess, free_port, write_config

    write_key(tmp_path / "keys.yaml", "alice")
    operator_port = free_port()
    config = write_config(
        tmp_path,
        diffusion_sim,
        ar_sim,
        edge={"header_timeout": 0.5, "body_timeout": 0.5, "operator_port": operator_port},
    )
    gw = GatewayProcess(config, workers=2)
    try:
        # More slow clients than one worker would take first: whichever worker accepted each closes it.
        socks = [_connect(gw.port) for _ in range(8)]
        for sock in socks:
            sock.sendall(b"GET /heal")
        started = time.monotonic()
        for sock in socks:
            data, closed = _read_until_closed(sock, 0.5 + MARGIN)
            assert data.startswith(b"HTTP/1.1 408 ")
            assert closed - started < 0.5 + MARGIN
            sock.close()
        metrics = f"http://127.0.0.1:{operator_port}/metrics"
        # The operator listener reports the workers' counters summed: all eight closed by the deadline.
        closed = 'gateway_connections_closed_by_deadline_total{phase="header"} 8.0'
        assert wait_for(lambda: closed in httpx.get(metrics, timeout=5).text)
        assert httpx.get(f"http://127.0.0.1:{operator_port}/v1/models", timeout=5).status_code == 404
    finally:
        gw.stop()


def test_expect_100_continue_gets_the_interim_answer_then_the_response(gateway):
    """The interim 100 goes out at once (the client waits for it before its body), and the final answer
    after it, head and body whole (the edge's transport holds a head for its body)."""
    body = orjson.dumps(CHAT)
    sock = _connect(gateway.server.port)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {gateway.key}\r\nContent-Length: {len(body)}\r\n".encode()
        + b"Expect: 100-continue\r\nConnection: close\r\n\r\n"
    )
    interim = sock.recv(65536)
    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    sock.sendall(body)
    data, _ = _read_until_closed(sock, 10)
    sock.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert orjson.loads(rest)["object"] == "chat.completion"


# ---- the head's bounds and trailer fields --------------------------------------------------------------


def _flood(sock: socket.socket, first: bytes, line: Callable[[int], bytes], most: int) -> tuple[bytes, int]:
    """Send ``first``, then ``line(i)`` until the gateway answers and closes (or ``most`` were sent):
    the answer, and how many were sent."""
    sock.sendall(first)
    sent = 0
    try:
        while sent < most:
            sock.sendall(line(sent))
            sent += 1
    except OSError:  # closed under us: the answer is in the receive buffer (or was reset with it)
        pass
    data, _ = _read_until_closed(sock, MARGIN)
    return data, sent


def test_a_flood_of_header_lines_gets_431_before_authentication(make_gateway):
    """uvicorn kept every header line until the head ended or its deadline passed (hundreds of megabytes
    per connection at loopback speed); the edge answers at the 101st field."""
    gw = make_gateway(edge={"header_timeout": 2.0})
    sock = _connect(gw.server.port)
    data, sent = _flood(
        sock, b"POST /v1/chat/completions HTTP/1.1\r\n", lambda i: b"X-H%d: v\r\n" % i, 200_000
    )
    sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ")
    assert orjson.loads(body)["error"]["code"] == "request_header_fields_too_large"
    assert sent < 200_000  # closed long before the flood's end (what the socket buffers took is sent)
    assert gw.metric("gateway_requests_total") == 0  # never reached the app


def test_one_endless_header_value_gets_431(make_gateway):
    gw = make_gateway(edge={"header_timeout": 2.0})
    sock = _connect(gw.server.port)
    first = b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Endless: "
    data, sent = _flood(sock, first, lambda i: b"v" * 4096, 50_000)
    sock.close()
    assert data.startswith(b"HTTP/1.1 431 ")
    assert b"longer than 8192 bytes" in data
    assert sent < 50_000


def test_trailer_fields_are_not_request_headers(gateway):
    """A chunked body's trailer section is read after the body: an Authorization or x-gateway-route sent
    there was merged into the request's headers (RFC 9110 §6.5.1 forbids it) and authenticated or routed
    the request. Trailers are dropped: no credential, no route choice."""
    body = orjson.dumps(CHAT)

    def chunked(path: str, head: bytes, trailers: bytes) -> bytes:
        sock = _connect(gateway.server.port)
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n".encode()
            + head
            + b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + b"%x\r\n" % len(body)
            + body
            + b"\r\n0\r\n"
            + trailers
            + b"\r\n"
        )
        data, _ = _read_until_closed(sock, 10)
        sock.close()
        return data

    key = f"Authorization: Bearer {gateway.key}\r\n".encode()
    answer = chunked("/v1/chat/completions", b"", key)
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
    assert chunked("/v1/chat/completions", key, b"X-Trailer: fine\r\n").startswith(b"HTTP/1.1 200 ")
    dry = chunked("/v1/gateway/route", key, b"x-gateway-route: diffusion\r\n")
    assert dry.startswith(b"HTTP/1.1 200 ")
    explained = orjson.loads(dry.partition(b"\r\n\r\n")[2])
    assert explained["backend"] == "autoregressive"  # the model named: the trailer's choice is not seen
    assert not any(reason.startswith("explicit:header") for reason in explained["reasons"])


# ---- request encodings and forwarded headers ----------------------------------------------------------


def test_a_gzip_body_is_decoded_and_forwarded_plain(gateway, ar_sim):
    body = orjson.dumps(CHAT)
    response = _post(gateway.url, gateway.key, gzip.compress(body), {"content-encoding": "gzip"})
    assert response.status_code == 200, response.text
    assert ar_sim.state.last_body["messages"] == CHAT["messages"]
    assert "content-encoding" not in ar_sim.state.last_headers


def test_a_deflate_body_is_decoded(gateway, ar_sim):
    response = _post(
        gateway.url, gateway.key, zlib.compress(orjson.dumps(CHAT)), {"content-encoding": "deflate"}
    )
    assert response.status_code == 200, response.text


def test_a_decompression_bomb_gets_413(make_gateway):
    gw = make_gateway(server={"max_body_bytes": 64 * 1024})
    bomb = gzip.compress(b"{" + b" " * (10 * 1024 * 1024) + b"}")  # 10 MB of JSON in ~10 kB
    assert len(bomb) < 64 * 1024
    response = _post(gw.url, gw.key, bomb, {"content-encoding": "gzip"})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"


def test_an_unknown_encoding_gets_415(gateway):
    response = _post(gateway.url, gateway.key, b"\x00\x01", {"content-encoding": "br"})
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_encoding"
    assert "gzip" in response.headers["accept-encoding"]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/gateway/route"])
def test_more_than_two_encoding_layers_get_415_on_the_proxy_and_the_dry_run(gateway, path):
    """Each layer is a decompression up to the body limit: a body stacked a thousand gzip layers deep held
    the event loop for seconds. Two are decoded; a third, on the same line or another, is refused."""
    plain = orjson.dumps(CHAT)
    twice = gzip.compress(gzip.compress(plain))
    auth = {"authorization": f"Bearer {gateway.key}", "content-type": "application/json"}

    def post(body: bytes, encodings: list[str]) -> httpx.Response:
        headers = [*auth.items(), *(("content-encoding", value) for value in encodings)]
        return httpx.post(gateway.url + path, content=body, headers=headers, timeout=10)

    assert post(twice, ["gzip, gzip"]).status_code == 200
    assert post(twice, ["gzip", "gzip"]).status_code == 200  # two lines are one list
    for encodings in (["gzip, gzip, gzip"], ["gzip", "gzip", "gzip"], ["deflate", "gzip, gzip"]):
        response = post(gzip.compress(twice), encodings)
        assert response.status_code == 415, (encodings, response.text)
        assert response.json()["error"]["code"] == "too_many_encodings"
        assert "gzip" in response.headers["accept-encoding"]


def test_a_body_that_is_not_what_its_encoding_says_gets_400(gateway):
    response = _post(gateway.url, gateway.key, orjson.dumps(CHAT), {"content-encoding": "gzip"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_encoding"


def test_only_allowlisted_client_headers_reach_the_backend(gateway, ar_sim):
    invented = {
        "api-key": "leak",
        "x-original-url": "/admin",
        "x-anything": "1",
        "content-encoding": "identity",
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "user-agent": "edge-test",
    }
    assert _post(gateway.url, gateway.key, orjson.dumps(CHAT), invented).status_code == 200
    seen = ar_sim.state.last_headers
    for name in ("api-key", "x-original-url", "x-anything", "content-encoding"):
        assert name not in seen
    assert seen["traceparent"] == invented["traceparent"]
    assert seen["user-agent"] == "edge-test"


# ---- upstream answers ----------------------------------------------------------------------------------


async def _big_backend(scope: Any, receive: Any, send: Any) -> None:
    """A backend whose answers are 200 kB: one JSON body, or 200 SSE events of 1 kB."""
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    stream = scope["method"] == "POST" and orjson.loads(body).get("stream") is True
    kind = b"text/event-stream" if stream else b"application/json"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    if not stream:
        answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 200_000}}]}
        await send({"type": "http.response.body", "body": orjson.dumps(answer)})
        return
    delta = orjson.dumps({"choices": [{"index": 0, "delta": {"content": "x" * 1000}}]})
    for _ in range(200):
        await send({"type": "http.response.body", "body": b"data: " + delta + b"\n\n", "more_body": True})
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})


@pytest.mark.parametrize("client", ["httptools", "httpx"])
def test_an_upstream_answer_past_the_cap_is_a_clear_502(tmp_path, diffusion_sim, client):
    key = write_key(tmp_path / "keys.yaml", "alice")
    with ServerThread(_big_backend) as backend:
        settings = gateway_settings(
            diffusion_sim.url,
            backend.url,
            auth={"keys_file": str(tmp_path / "keys.yaml")},
            server={"upstream_client": client},
            edge={"max_upstream_response_bytes": 64 * 1024},
        )
        with ServerThread(create_app(settings, registry=CollectorRegistry())) as gw:
            response = _post(gw.url, key, orjson.dumps(CHAT))
            assert response.status_code == 502
            assert response.json()["error"]["code"] == "backend_answer_too_large"
            # Streamed, the cap ends the stream with an in-band error instead of relaying more.
            with httpx.stream(
                "POST",
                gw.url + "/v1/chat/completions",
                json={**CHAT, "stream": True},
                headers={"authorization": f"Bearer {key}"},
                timeout=30,
            ) as stream:
                assert stream.status_code == 200
                text = "".join(stream.iter_text())
    assert "backend_stream_interrupted" in text
    assert len(text.encode()) < 2 * 64 * 1024


def test_the_httpx_client_asks_for_no_encoding(make_gateway, ar_sim):
    gw = make_gateway(server={"upstream_client": "httpx"})
    assert _post(gw.url, gw.key, orjson.dumps(CHAT), {"accept-encoding": "gzip"}).status_code == 200
    assert ar_sim.state.last_headers.get("accept-encoding", "identity") == "identity"


# ---- /metrics -------------------------------------------------------------------------------------------


def test_metrics_behind_a_bearer_token(make_gateway):
    gw = make_gateway(telemetry={"metrics_token": "scrape-token-0123456789"})
    assert httpx.get(gw.url + "/metrics", timeout=5).status_code == 401
    wrong = httpx.get(gw.url + "/metrics", headers={"authorization": "Bearer nope"}, timeout=5)
    assert wrong.status_code == 401 and "scrape-token" not in wrong.text
    ok = httpx.get(
        gw.url + "/metrics", headers={"authorization": "Bearer scrape-token-0123456789"}, timeout=5
    )
    assert ok.status_code == 200 and "gateway_connections_open" in ok.text


def test_metrics_only_on_the_operator_listener(tmp_path, diffusion_sim, ar_sim):
    write_key(tmp_path / "keys.yaml", "alice")
    settings = gateway_settings(
        diffusion_sim.url,
        ar_sim.url,
        auth={"keys_file": str(tmp_path / "keys.yaml")},
        telemetry={"metrics_on_main": False, "metrics_token": "scrape-token-0123456789"},
        edge={"operator_port": 0},
    )
    with TwoListeners(create_app(settings, registry=CollectorRegistry())) as gw:
        main = f"http://127.0.0.1:{gw.port('main')}"
        operator = f"http://127.0.0.1:{gw.port('operator')}"
        assert httpx.get(main + "/metrics", timeout=5).status_code == 404
        assert httpx.get(main + "/healthz", timeout=5).status_code == 200
        assert httpx.get(operator + "/metrics", timeout=5).status_code == 200  # no token there


def test_key_names_can_be_hashed_in_metrics(make_gateway):
    gw = make_gateway(telemetry={"metrics_principal": "hash"})
    assert _post(gw.url, gw.key, orjson.dumps(CHAT)).status_code == 200
    text = gw.scrape()
    assert 'principal="alice"' not in text
    assert 'principal="key-' in text


# ---- parameter validation and stream accounting --------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("temperature", -1, "decimal_below_min_value"),
        ("temperature", 5, "decimal_above_max_value"),
        ("top_p", 1.5, "decimal_above_max_value"),
        ("presence_penalty", -3, "decimal_below_min_value"),
        ("max_tokens", 0, "integer_below_min_value"),
        ("n", 0, "integer_below_min_value"),
        ("temperature", "hot", "invalid_type"),
        ("max_tokens", 1.5, "invalid_type"),
    ],
)
def test_a_parameter_out_of_range_is_the_same_400_on_every_route(
    gateway, diffusion_sim, ar_sim, field, value, code
):
    answers = []
    for model in ("auto", "google/gemma-4-26B-A4B-it", "nvidia/diffusiongemma-26B-A4B-it-NVFP4"):
        before = (diffusion_sim.state.started, ar_sim.state.started)
        body = {**CHAT, "model": model, field: value}
        response = _post(gateway.url, gateway.key, orjson.dumps(body))
        assert response.status_code == 400, (model, response.text)
        answers.append(response.json())
        assert (diffusion_sim.state.started, ar_sim.state.started) == before  # nothing reached a backend
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["error"]["code"] == code and answers[0]["error"]["param"] == field


def test_parameters_in_range_or_null_pass(gateway):
    body = {**CHAT, "model": "auto", "temperature": 0, "top_p": 1, "max_tokens": 5, "presence_penalty": None}
    assert _post(gateway.url, gateway.key, orjson.dumps(body)).status_code == 200


def test_the_messages_api_has_anthropics_temperature_range(gateway):
    body = {
        "model": "auto",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "Hi"}],
        "temperature": 1.5,
    }
    response = httpx.post(
        gateway.url + "/v1/messages", json=body, headers={"x-api-key": gateway.key}, timeout=10
    )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "temperature"


def test_an_abandoned_stream_is_499_disconnected_with_the_tokens_relayed(
    tmp_path, diffusion_sim, slow_ar_sim, caplog
):
    import logging

    caplog.set_level(logging.INFO, logger="gateway.request")
    key = write_key(tmp_path / "keys.yaml", "alice")
    settings = gateway_settings(
        diffusion_sim.url, slow_ar_sim.url, auth={"keys_file": str(tmp_path / "keys.yaml")}
    )
    registry = CollectorRegistry()
    with ServerThread(create_app(settings, registry=registry)) as gw:
        body = {**CHAT, "stream": True, "max_tokens": 60}
        with httpx.stream(
            "POST",
            gw.url + "/v1/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {key}", "x-request-id": "abandon-1"},
            timeout=30,
        ) as response:
            seen = 0
            for line in response.iter_lines():
                if line.startswith("data: "):
                    seen += 1
                if seen == 4:  # the role event and three tokens: then hang up
                    break
        assert wait_for(lambda: sample_sum(registry, "gateway_requests_total", outcome="disconnected") == 1)
        assert sample_sum(registry, "gateway_requests_total", outcome="ok") == 0
        tokens = sample_sum(registry, "gateway_tokens_total", type="completion")
    lines = [getattr(r, "fields", {}) for r in caplog.records if r.name == "gateway.request"]
    line = next(f for f in lines if f.get("client_request_id") == "abandon-1")
    assert line["status"] == 499 and line["outcome"] == "disconnected"
    assert line["usage_estimated"] is True
    # At least the three tokens read, and fewer than the 60 asked for (the stream was cut early).
    assert 3 <= line["completion_tokens"] < 60
    assert tokens == line["completion_tokens"]


def test_error_bodies_echo_a_bounded_printable_path(gateway):
    response = httpx.get(gateway.url + "/v1/" + "%2f..%0a" * 100 + "\u00e9", timeout=5)
    assert response.status_code == 404
    message = response.json()["error"]["message"]
    assert len(message) < 140 and "\n" not in message and message.isascii()


async def _endless_backend(scope: Any, receive: Any, send: Any) -> None:
    """A backend streaming 20 MB of SSE: far more than socket buffers hold for a client that reads none."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
    )
    if scope["method"] != "POST":
        await send({"type": "http.response.body", "body": b""})
        return
    delta = orjson.dumps({"choices": [{"index": 0, "delta": {"content": "x" * 1000}}]})
    for _ in range(20_000):
        await send({"type": "http.response.body", "body": b"data: " + delta + b"\n\n", "more_body": True})
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})


def test_a_client_that_reads_nothing_of_its_stream_is_closed(tmp_path, diffusion_sim):
    key = write_key(tmp_path / "keys.yaml", "alice")
    with ServerThread(_endless_backend) as backend:
        settings = gateway_settings(
            diffusion_sim.url,
            backend.url,
            auth={"keys_file": str(tmp_path / "keys.yaml")},
            edge={"send_timeout": 0.5},
        )
        registry = CollectorRegistry()
        with ServerThread(create_app(settings, registry=registry)) as gw:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", gw.port))
            body = orjson.dumps({**CHAT, "stream": True})
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            assert wait_for(
                lambda: (
                    sample_sum(registry, "gateway_connections_closed_by_deadline_total", phase="send") == 1
                ),
                within=0.5 + 30,
            )
            sock.close()
            assert wait_for(
                lambda: sample_sum(registry, "gateway_requests_total", outcome="disconnected") == 1
            )


async def _48k_backend(scope: Any, receive: Any, send: Any) -> None:
    """Non-streamed answers of about 30 kB: under asyncio's 64 kB write-buffer mark, so writing never
    pauses, yet more than a client with a small receive buffer takes in."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 30_000}}]}
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
    )
    await send({"type": "http.response.body", "body": orjson.dumps(answer)})


def test_a_small_answer_to_a_client_that_reads_nothing_does_not_hold_the_connection(tmp_path, diffusion_sim):
    """uvicorn closes an idle kept-alive connection with close(), which waits for the write buffer to drain:
    for a client that never reads, for ever. The send deadline aborts it."""
    key = write_key(tmp_path / "keys.yaml", "alice")
    with ServerThread(_48k_backend) as backend:
        settings = gateway_settings(
            diffusion_sim.url,
            backend.url,
            auth={"keys_file": str(tmp_path / "keys.yaml")},
            edge={"send_timeout": 0.5, "keepalive_timeout": 0.2},
        )
        registry = CollectorRegistry()
        server = ServerThread(create_app(settings, registry=registry))
        # Accepted sockets inherit a small send buffer (and no autotuning: loopback's would take in 2 MB),
        # as on a real network: most of the answer stays in the gateway's own write buffer.
        server.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        with server as gw:
            socks = []
            for _ in range(4):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
                sock.connect(("127.0.0.1", gw.port))
                body = orjson.dumps(CHAT)
                sock.sendall(
                    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                socks.append(sock)
            assert wait_for(lambda: sample_sum(registry, "gateway_connections_open", listener="main") == 4)
            assert wait_for(
                lambda: sample_sum(registry, "gateway_connections_open", listener="main") == 0, 30
            )
            assert sample_sum(registry, "gateway_connections_closed_by_deadline_total", phase="send") == 4
            for sock in socks:
                sock.close()


def test_a_pipelined_slow_body_never_corrupts_the_response_before_it(tmp_path, diffusion_sim, slow_ar_sim):
    """HTTP/1.1 pipelining: the second request's body deadline passes while the first answer is still
    being generated; the first response must arrive whole, then the second's 408."""
    key = write_key(tmp_path / "keys.yaml", "alice")
    settings = gateway_settings(
        diffusion_sim.url,
        slow_ar_sim.url,
        auth={"keys_file": str(tmp_path / "keys.yaml")},
        edge={"header_timeout": 5, "body_timeout": 0.3},
    )
    with ServerThread(create_app(settings, registry=CollectorRegistry())) as gw:
        body = orjson.dumps({**CHAT, "max_tokens": 20})  # about 1.7 s at the DGX Spark pace
        first = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        second = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
            "Content-Length: 100\r\n\r\n{"
        ).encode()
        sock = _connect(gw.port)
        sock.sendall(first + second)
        data, _ = _read_until_closed(sock, 2 + 0.3 + MARGIN)
        sock.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"content-length")
    )
    assert orjson.loads(rest[:length])["choices"][0]["message"]["content"]
    assert rest[length:].startswith(b"HTTP/1.1 408 ")
