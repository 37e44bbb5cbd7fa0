"""No credential, digest or token ever reaches a log line, a metric, or an error body (docs/peers.md #6)."""

from __future__ import annotations

import logging
import threading
import time

import httpx
import jwt
import pytest

from gateway.auth.keys import digest
from tests.support import AR_MODEL, wait_for

SECRET = "0123456789abcdef0123456789abcdef-jwt-secret"


@pytest.fixture
def capture_all_logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


def test_no_secret_in_logs_metrics_or_errors(make_gateway, capture_all_logs, tmp_path):
    gw = make_gateway(
        auth={
            "keys_file": str(tmp_path / "keys.yaml"),
            "jwt": {"issuer": "i", "audience": "a", "algorithms": ["HS256"], "secret": SECRET},
        },
    )
    token = jwt.encode(
        {"iss": "i", "aud": "a", "sub": "robot", "exp": int(time.time()) + 60}, SECRET, "HS256"
    )
    bad_token = jwt.encode(
        {"iss": "i", "aud": "wrong", "sub": "robot", "exp": int(time.time()) + 60}, SECRET, "HS256"
    )
    wrong_key = "gw-" + "A" * 43
    bodies: list[str] = []
    body = {"model": "auto", "messages": [{"role": "user", "content": "hi"}]}
    for headers in (
        {"authorization": f"Bearer {gw.key}"},
        {"x-api-key": gw.key},
        {"authorization": f"Bearer {token}"},
        {"authorization": f"Bearer {bad_token}"},
        {"authorization": f"Bearer {wrong_key}"},
        {"authorization": f"Basic {gw.key}"},
    ):
        for stream in (False, True):
            r = httpx.post(
                gw.base_url + "/chat/completions", json={**body, "stream": stream}, headers=headers
            )
            bodies.append(r.text)
        r = httpx.post(
            gw.base_url + "/chat/completions",
            json={**body, "model": AR_MODEL},
            headers=headers,
            params={"api_key": gw.key},
        )
        bodies.append(r.text)
        bodies.append(httpx.post(gw.base_url + "/chat/completions", content=b"{", headers=headers).text)
        # The agent APIs, streamed and not, and their error envelopes.
        for stream in (False, True):
            bodies.append(
                httpx.post(
                    gw.base_url + "/responses",
                    json={"model": "auto", "input": "hi", "stream": stream},
                    headers=headers,
                ).text
            )
            messages = {"model": "auto", "max_tokens": 20, "messages": body["messages"], "stream": stream}
            bodies.append(httpx.post(gw.base_url + "/messages", json=messages, headers=headers).text)
        bodies.append(httpx.post(gw.base_url + "/messages", content=b"{", headers=headers).text)
        bodies.append(httpx.get(gw.base_url + "/nope?key=" + gw.key, headers=headers).text)
    assert wait_for(
        lambda: gw.metric("gateway_requests_total", backend="none", outcome="auth_error", stream="false") > 0
    )
    metrics = gw.scrape() + httpx.get(gw.url + "/readyz").text
    # Everything the gateway's thread logged (gateway, uvicorn, its upstream and IdP clients), at DEBUG; the
    # test's own client logs its URLs (query string included) from the main thread and is left out.
    main = threading.main_thread().ident
    logs = "\n".join(
        f"{r.getMessage()} {getattr(r, 'fields', '')}" for r in capture_all_logs.records if r.thread != main
    )
    # The capture works: the gateway's request log lines (one per request) are in there.
    assert sum(1 for r in capture_all_logs.records if r.thread != main and r.name == "gateway.request") >= 30
    assert "robot" in logs  # the JWT principal is named...
    secrets = [
        gw.key,
        digest(gw.key),
        token,
        bad_token,
        wrong_key,
        SECRET,
        "sim-diffusion-key",
        "sim-ar-key",
        digest(wrong_key),
        token.split(".")[2],
    ]
    for secret in secrets:
        assert secret not in logs, "secret in logs"
        assert secret not in metrics, "secret in metrics"
        for text in bodies:
            assert secret not in text, "secret in an error body"
