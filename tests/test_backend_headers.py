"""What a backend's response headers can do to a client: nothing but name the content type.

A scripted backend on loopback answers with headers the gateway owns (``x-gateway-backend``,
``x-request-id``, ``x-ratelimit-*``), invented ones, a cookie, and header blocks past the cap; each of the
three upstream clients (``server.upstream_client``) is run against it, streamed and not.
"""

from __future__ import annotations

import contextlib
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from prometheus_client import CollectorRegistry

from gateway.app import create_app
from gateway.upstream.base import MAX_RESPONSE_HEADER_BYTES
from tests.support import AR_MODEL, ServerThread, gateway_settings, write_key

CLIENTS = ("httptools", "httpx")
CHAT = [{"role": "user", "content": "Hello"}]
ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": AR_MODEL,
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "model": AR_MODEL,
    "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
# Headers a backend has no business setting for the client.
HOSTILE = [
    ("x-gateway-backend", "someone-else"),
    ("x-gateway-route", "explicit:header"),
    ("x-request-id", "backend-chosen"),
    ("x-ratelimit-remaining-requests", "999999"),
    ("retry-after", "3600"),
    ("set-cookie", "session=stolen"),
    ("x-internal-host", "10.0.0.5"),
    ("access-control-allow-origin", "*"),
]


class Backend(socketserver.ThreadingTCPServer):
    """A backend whose chat answers carry ``extra`` headers; every other request (health probes,
    metrics scrapes) gets an empty 200."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, extra: list[tuple[str, str]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.extra = extra
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    def __enter__(self) -> Backend:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(10)


class _Handler(socketserver.StreamRequestHandler):
    server: Backend

    def handle(self) -> None:
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = self.rfile.readline(65536)
            if not line:
                return
            head += line
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        body = orjson.loads(self.rfile.read(length)) if length else {}
        if not head.startswith(b"POST /v1/chat/completions "):
            self._send([("content-type", "application/json")], b"{}")
        elif body.get("stream"):
            events = b"data: " + orjson.dumps(CHUNK) + b"\n\ndata: [DONE]\n\n"
            self._send([("content-type", "text/event-stream"), *self.server.extra], events)
        else:
            self._send([("content-type", "application/json"), *self.server.extra], orjson.dumps(ANSWER))

    def _send(self, headers: list[tuple[str, str]], body: bytes) -> None:
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers)
        head = f"HTTP/1.1 200 OK\r\n{lines}content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        # The gateway may hang up on an answer it refuses.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(head.encode("latin-1") + body)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """A gateway in front of a Backend sending ``extra``, on the upstream client named."""
    opened: list[Any] = []

    def start(extra: list[tuple[str, str]], client: str) -> tuple[str, str]:
        backend = Backend(extra).__enter__()
        opened.append(backend)
        keys = tmp_path / "keys.yaml"
        key = write_key(keys, f"k{len(opened)}")
        settings = gateway_settings(
            backend.url,
            backend.url,
            auth={"keys_file": str(keys)},
            server={"upstream_client": client},
            telemetry={"scrape_backends": False},
        )
        server = ServerThread(create_app(settings, registry=CollectorRegistry())).__enter__()
        opened.append(server)
        return server.url, key

    yield start
    for thing in reversed(opened):
        thing.__exit__()


def chat(url: str, key: str, stream: bool) -> httpx.Response:
    return httpx.post(
        url + "/v1/chat/completions",
        json={"model": AR_MODEL, "messages": CHAT, "stream": stream},
        headers={"authorization": f"Bearer {key}", "x-request-id": "client-id"},
        timeout=10,
    )


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("client", CLIENTS)
def test_only_the_content_type_comes_from_the_backend(serve, client, stream):
    url, key = serve(HOSTILE, client)
    r = chat(url, key, stream)
    assert r.status_code == 200, r.text
    assert r.headers.get_list("x-gateway-backend") == ["autoregressive"]  # the gateway's, once
    assert r.headers.get_list("x-gateway-route") == ["explicit:model"]
    (request_id,) = r.headers.get_list("x-request-id")
    assert request_id not in ("backend-chosen", "client-id")
    for name in ("set-cookie", "x-internal-host", "access-control-allow-origin", "retry-after"):
        assert name not in r.headers, name
    assert not [k for k in r.headers if k.startswith("x-ratelimit")]  # no limits configured here
    assert r.headers["content-type"].startswith("text/event-stream" if stream else "application/json")
    if stream:
        assert b"[DONE]" in r.content
    else:
        assert r.json()["choices"][0]["message"]["content"] == "Hi"


# A header block over the cap, as many ordinary headers or as one endless header.
MANY = [(f"x-filler-{i}", "v" * 1000) for i in range(2 * 1024)]
ONE = [("x-filler", "v" * (2 * 1024 * 1024))]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("extra", [MANY, ONE], ids=["many-headers", "one-endless-header"])
def test_an_oversized_header_block_is_a_502_before_the_first_byte(serve, client, stream, extra):
    assert sum(len(k) + len(v) for k, v in extra) > MAX_RESPONSE_HEADER_BYTES
    url, key = serve(extra, client)
    r = chat(url, key, stream)
    assert r.status_code == 502
    assert r.headers["content-type"] == "application/json"
    error = r.json()["error"]
    assert error["code"] == "backend_error" and error["type"]
    assert "x-filler" not in r.headers and "x-filler-0" not in r.headers
    assert len(r.content) < 4096


def test_a_header_block_within_the_cap_still_passes(serve):
    url, key = serve([(f"x-filler-{i}", "v" * 100) for i in range(100)], "httptools")
    assert chat(url, key, False).status_code == 200
