"""The gateway's HTTP surface: allowlisted routes, one error envelope, limits, key policy, hot reload."""

from __future__ import annotations

import socket

import httpx
import orjson
import pytest

from gateway.cli import main as cli
from tests.support import AR_MODEL, DIFFUSION_MODEL, wait_for, write_key

HELLO = [{"role": "user", "content": "hi"}]


def assert_envelope(r, status):
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert "Traceback" not in r.text
    return error


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/tokenize"),
        ("POST", "/pause"),
        ("POST", "/collective_rpc"),
        ("GET", "/version"),
        ("GET", "/health"),
        ("POST", "/v1/embeddings"),
        ("GET", "/docs"),
        ("GET", "/openapi.json"),
    ],
)
def test_unknown_and_backend_internal_paths_are_404_envelopes(gateway, method, path):
    r = httpx.request(method, gateway.url + path, headers={"authorization": f"Bearer {gateway.key}"})
    assert assert_envelope(r, 404)["code"] == "unknown_url"


@pytest.mark.parametrize("path", ["/metrics/../v1/models", "/v1/../v1/models", "/v1/%2e%2e/v1/models"])
def test_dot_segments_are_not_resolved(gateway, path):
    # httpx (like browsers) removes dot segments before sending, so the bytes go out as they are written.
    with socket.create_connection(("127.0.0.1", gateway.server.port), timeout=10) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {gateway.key}\r\n"
            "connection: close\r\n\r\n".encode()
        )
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 404 "), head
    assert orjson.loads(body)["error"]["code"] == "unknown_url"


def test_wrong_method_is_405_envelope(gateway):
    r = httpx.get(gateway.base_url + "/chat/completions", headers={"authorization": f"Bearer {gateway.key}"})
    assert_envelope(r, 405)


def test_oversized_body_is_413(make_gateway):
    gw = make_gateway(server={"max_body_bytes": 2048})
    big = {"model": "auto", "messages": [{"role": "user", "content": "x" * 4096}]}
    r = httpx.post(gw.base_url + "/chat/completions", json=big, headers={"authorization": f"Bearer {gw.key}"})
    assert_envelope(r, 413)

    def chunks():
        yield b'{"model": "auto", "messages": [{"role": "user", "content": "'
        yield b"y" * 4096
        yield b'"}]}'

    # Without a Content-Length (chunked), the limit still holds.
    r = httpx.post(
        gw.base_url + "/chat/completions", content=chunks(), headers={"authorization": f"Bearer {gw.key}"}
    )
    assert_envelope(r, 413)


@pytest.mark.parametrize("body", [b"{", b"\xff\xfe\x00", b"[]", b'{"model": "auto"}'])
def test_malformed_bodies_are_400_envelopes(gateway, body):
    r = httpx.post(
        gateway.base_url + "/chat/completions",
        content=body,
        headers={"authorization": f"Bearer {gateway.key}", "content-type": "application/json"},
    )
    assert_envelope(r, 400)


def test_auth_is_checked_before_the_body(gateway):
    r = httpx.post(gateway.base_url + "/chat/completions", content=b"{")
    assert_envelope(r, 401)
    assert r.headers["www-authenticate"].startswith("Bearer")


def test_key_in_query_string_is_not_a_credential(gateway):
    r = httpx.get(gateway.base_url + "/models", params={"api_key": gateway.key})
    assert_envelope(r, 401)


def test_model_restricted_keys(make_gateway):
    gw = make_gateway()
    limited = write_key(gw.keys_file, "limited", models=["autoregressive"])
    assert wait_for(
        lambda: httpx.get(gw.base_url + "/models", headers={"x-api-key": limited}).status_code == 200
    )
    h = {"x-api-key": limited}
    ids = [m["id"] for m in httpx.get(gw.base_url + "/models", headers=h).json()["data"]]
    assert ids == [AR_MODEL]
    ok = httpx.post(gw.base_url + "/chat/completions", json={"model": AR_MODEL, "messages": HELLO}, headers=h)
    assert ok.status_code == 200
    for model in ("auto", DIFFUSION_MODEL, "diffusion"):
        r = httpx.post(gw.base_url + "/chat/completions", json={"model": model, "messages": HELLO}, headers=h)
        assert assert_envelope(r, 403)["code"] == "model_not_allowed"


def test_keys_created_and_revoked_by_the_cli_apply_without_restart(make_gateway, capsys):
    gw = make_gateway(auth=None)
    cli(["keys", "create", "carol", "--keys-file", str(gw.keys_file), "--expires", "30d"])
    key = capsys.readouterr().out.strip()
    h = {"authorization": f"Bearer {key}"}
    assert wait_for(lambda: httpx.get(gw.base_url + "/models", headers=h).status_code == 200)
    cli(["keys", "revoke", "carol", "--keys-file", str(gw.keys_file)])
    assert wait_for(lambda: httpx.get(gw.base_url + "/models", headers=h).status_code == 401)


def test_healthz_readyz_metrics(gateway, make_gateway):
    assert httpx.get(gateway.url + "/healthz").json() == {"status": "ok"}
    ready = httpx.get(gateway.url + "/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "backends": {"diffusion": "up", "autoregressive": "up"}}
    assert "gateway_requests_total" in gateway.scrape()


def test_readyz_is_503_when_no_backend_is_up(tmp_path):
    from prometheus_client import CollectorRegistry

    from gateway.app import create_app
    from tests.support import ServerThread, gateway_settings

    settings = gateway_settings("http://127.0.0.1:9", "http://127.0.0.1:9", auth={"allow_anonymous": True})
    with ServerThread(create_app(settings, registry=CollectorRegistry())) as server:
        # The background probes run at start-up; /readyz reports what they found.
        assert wait_for(lambda: httpx.get(server.url + "/readyz").status_code == 503)
        r = httpx.get(server.url + "/readyz")
    assert r.json() == {"status": "unavailable", "backends": {"diffusion": "down", "autoregressive": "down"}}


def test_an_unexpected_error_is_a_500_envelope_with_the_request_id(gateway, caplog):
    state = gateway.server.app.state.gateway

    async def boom(*args, **kwargs):
        raise RuntimeError("secret internals " + gateway.key)

    original = state.proxy.handle
    state.proxy.handle = boom
    try:
        r = httpx.post(
            gateway.base_url + "/chat/completions",
            json={"model": "auto", "messages": HELLO},
            headers={"authorization": f"Bearer {gateway.key}", "x-request-id": "req-500"},
        )
    finally:
        state.proxy.handle = original
    assert assert_envelope(r, 500)["code"] == "internal_error"
    request_id = r.headers["x-request-id"]
    assert request_id != "req-500"  # the gateway's own; the client's is logged beside it
    assert "secret internals" not in r.text
    # The operator gets what the client does not: the error, with its traceback and the request id.
    logged = [rec for rec in caplog.records if rec.name == "gateway" and rec.message == "unhandled error"]
    assert len(logged) == 1
    assert logged[0].exc_info is not None and isinstance(logged[0].exc_info[1], RuntimeError)
    assert logged[0].fields == {"request_id": request_id, "client_request_id": "req-500"}
