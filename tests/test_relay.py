"""The stream relay byte for byte, with the upstream transport as the test seam (httpx.MockTransport)."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client import CollectorRegistry

from gateway.app import create_app
from tests.support import gateway_settings

CHUNK = (
    b'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
)
USAGE = (
    b'data: {"id":"c1","object":"chat.completion.chunk","choices":[],'
    b'"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}\n\n'
)
DONE = b"data: [DONE]\n\n"


class Upstream(httpx.AsyncByteStream):
    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts

    async def __aiter__(self):
        for part in self.parts:
            yield part


def app_with(parts: list[bytes]):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Upstream(parts))

    settings = gateway_settings("http://d", "http://a", auth={"allow_anonymous": True})
    registry = CollectorRegistry()
    return create_app(settings, upstream_transport=httpx.MockTransport(handler), registry=registry), registry


async def relay(parts: list[bytes], include_usage: bool) -> tuple[httpx.Response, CollectorRegistry]:
    app, registry = app_with(parts)
    body = {"model": "auto", "messages": [{"role": "user", "content": "hello!"}], "stream": True}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://gw") as client:
        return await client.post("/v1/chat/completions", json=body), registry


@pytest.mark.parametrize("include_usage", [True, False])
async def test_bytes_are_relayed_untouched_with_keepalives_and_split_events(include_usage):
    whole = b": keep-alive\n\n" + CHUNK + b": keep-alive\n\n" + CHUNK + USAGE + DONE
    # Cut the upstream bytes at awkward places: inside an event, inside "[DONE]".
    parts = [whole[:7], whole[7:50], whole[50 : len(whole) - 5], whole[len(whole) - 5 :]]
    r, registry = await relay(parts, include_usage)
    expected = whole if include_usage else whole.replace(USAGE, b"")
    assert r.content == expected
    assert r.headers["x-accel-buffering"] == "no"
    assert r.headers["content-type"].startswith("text/event-stream")
    labels = {"backend": "diffusion", "type": "completion"}
    assert registry.get_sample_value("gateway_tokens_total", labels) == 2


async def test_stream_cut_without_done_ends_with_an_error_event():
    r, registry = await relay([CHUNK, CHUNK], include_usage=False)
    assert r.content.startswith(CHUNK + CHUNK)
    assert r.content.endswith(b"\n\ndata: [DONE]\n\n")
    assert b'"code":"backend_stream_interrupted"' in r.content
    from tests.conftest import sample_sum

    assert sample_sum(registry, "gateway_requests_total", backend="diffusion", outcome="upstream_broken") == 1
