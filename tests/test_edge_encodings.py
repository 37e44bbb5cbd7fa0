"""Request body encodings (gateway/proxy/encoding.py): the number of layers is bounded before the body is
read, every Content-Encoding line counts, and decoding runs off the event loop. The routes' answers are
tests/test_edge.py's."""

from __future__ import annotations

import asyncio
import gzip
import threading
from typing import Any

import pytest
from starlette.requests import Request

from gateway.errors import UnsupportedMediaType
from gateway.proxy import encoding
from gateway.proxy.body import read_body
from gateway.proxy.encoding import content_codings


def test_the_number_of_layers_is_bounded_identity_aside() -> None:
    assert content_codings("gzip, identity, deflate, identity", 2) == ("gzip", "deflate")
    assert content_codings("x-gzip", 1) == ("gzip",)
    with pytest.raises(UnsupportedMediaType) as refused:
        content_codings("gzip, gzip", 1)
    assert refused.value.code == "too_many_encodings"
    assert refused.value.headers == {"accept-encoding": "gzip, deflate"}
    with pytest.raises(UnsupportedMediaType) as refused:
        content_codings(", ".join(["gzip"] * 1000), 2)  # refused at the third, whatever follows
    assert "at most 2" in refused.value.message


def _request(body: bytes, encodings: list[bytes]) -> Request:
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    headers = [(b"content-encoding", value) for value in encodings]
    return Request({"type": "http", "method": "POST", "path": "/", "headers": headers}, receive)


def test_every_content_encoding_line_is_a_layer_and_decoding_runs_off_the_event_loop(monkeypatch) -> None:
    threads: list[str] = []
    inflate = encoding._inflate

    def watched(data: bytes, wbits: int, limit: int, name: str) -> bytes:
        threads.append(threading.current_thread().name)
        return inflate(data, wbits, limit, name)

    monkeypatch.setattr(encoding, "_inflate", watched)
    body = gzip.compress(gzip.compress(b'{"model": "m"}'))

    async def run() -> bytes:
        return await read_body(_request(body, [b"gzip", b"gzip"]), 1 << 20, 2)

    assert asyncio.run(run()) == b'{"model": "m"}'
    assert len(threads) == 2
    assert all(name.startswith("gateway-decode") for name in threads)
    assert threading.main_thread().name not in threads

    async def three_lines() -> bytes:
        return await read_body(_request(gzip.compress(body), [b"gzip", b"gzip", b"gzip"]), 1 << 20, 2)

    with pytest.raises(UnsupportedMediaType):
        asyncio.run(three_lines())
    assert len(threads) == 2  # refused before any decoding
