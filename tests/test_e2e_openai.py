"""End to end: a real uvicorn gateway in front of simulated vLLM backends, driven by the official SDK."""

from __future__ import annotations

import logging
import re

import httpx
import openai
import pytest

from tests.support import AR_MODEL, DIFFUSION_MODEL, wait_for

HELLO = [{"role": "user", "content": "Hello there!"}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city", "days"],
        },
    },
}


def client(gw, key=None):
    return openai.OpenAI(base_url=gw.base_url, api_key=key or gw.key, max_retries=0, timeout=10)


def test_chat_auto_goes_to_diffusion_and_reports_usage(gateway):
    raw = client(gateway).chat.completions.with_raw_response.create(model="auto", messages=HELLO)
    reply = raw.parse()
    assert raw.headers["x-gateway-backend"] == "diffusion"
    assert raw.headers["x-request-id"]
    assert reply.model == DIFFUSION_MODEL
    assert reply.choices[0].message.content
    assert reply.usage.completion_tokens > 0
    # Recorded just after the last byte went out: wait for it rather than race it.
    assert wait_for(
        lambda: (
            gateway.metric("gateway_tokens_total", backend="diffusion", type="completion")
            == reply.usage.completion_tokens
        )
    ), gateway.metric("gateway_tokens_total", backend="diffusion", type="completion")


def test_model_id_and_backend_name_pin_the_backend(gateway):
    c = client(gateway)
    for model in (AR_MODEL, "autoregressive"):
        raw = c.chat.completions.with_raw_response.create(model=model, messages=HELLO)
        assert raw.headers["x-gateway-backend"] == "autoregressive"
        assert raw.parse().model == AR_MODEL


def test_stream_without_include_usage_gets_no_usage_chunk(gateway):
    chunks = list(client(gateway).chat.completions.create(model="auto", messages=HELLO, stream=True))
    assert chunks, "no chunks"
    assert all(chunk.usage is None for chunk in chunks)
    assert all(chunk.choices for chunk in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text
    # The gateway still knew the counts: it asked upstream for them (recorded once the stream closes).
    assert wait_for(
        lambda: gateway.metric("gateway_tokens_total", backend="diffusion", type="completion") > 0
    )


def test_stream_with_include_usage_keeps_the_usage_chunk(gateway):
    chunks = list(
        client(gateway).chat.completions.create(
            model=AR_MODEL, messages=HELLO, stream=True, stream_options={"include_usage": True}
        )
    )
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    # The simulator's tokens are words: the usage count matches what was streamed.
    assert chunks[-1].usage.completion_tokens == len(text.replace(".", " .").split())


def test_stream_is_relayed_chunk_by_chunk(gateway):
    chunks = list(
        client(gateway).chat.completions.create(model=AR_MODEL, messages=HELLO, stream=True, max_tokens=12)
    )
    content_chunks = [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(content_chunks) == 12  # one per token, as the autoregressive backend sent them

    # Relayed as they arrive, not when the answer is whole: the backend stalls after its third token and
    # never finishes, yet the first three reach the client (a buffering gateway would time this out).
    stalled = openai.OpenAI(base_url=gateway.base_url, api_key=gateway.key, max_retries=0, timeout=5)
    with stalled.chat.completions.create(
        model=AR_MODEL,
        messages=HELLO,
        stream=True,
        max_tokens=12,
        extra_headers={"x-sim-fault-autoregressive": "stall_after=3"},
    ) as stream:
        received = []
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                received.append(chunk.choices[0].delta.content)
            if len(received) == 3:
                break
    assert len(received) == 3


def test_completions_plain_and_streamed(gateway):
    c = client(gateway)
    reply = c.completions.create(model="auto", prompt="Once upon a time")
    assert reply.choices[0].text
    streamed = list(
        c.completions.create(model=AR_MODEL, prompt="Once upon a time", stream=True, max_tokens=5)
    )
    assert "".join(ch.choices[0].text for ch in streamed if ch.choices)


def test_models_list(gateway):
    ids = [m.id for m in client(gateway).models.list()]
    assert ids == ["auto", DIFFUSION_MODEL, AR_MODEL]


def test_streamed_tool_call(gateway):
    stream = client(gateway).chat.completions.create(
        model=AR_MODEL,
        messages=[{"role": "user", "content": "Weather in Paris for 3 days?"}],
        tools=[WEATHER_TOOL],
        stream=True,
    )
    name, arguments, finish = "", "", None
    for chunk in stream:
        if not chunk.choices:
            continue
        for call in chunk.choices[0].delta.tool_calls or []:
            name += call.function.name or ""
            arguments += call.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    assert name == "get_weather"
    assert finish == "tool_calls"
    import json

    assert set(json.loads(arguments)) == {"city", "days"}


def test_unknown_fields_pass_through_untouched(gateway, diffusion_sim):
    client(gateway).chat.completions.create(
        model="auto",
        messages=HELLO,
        extra_body={
            "chat_template_kwargs": {"enable_thinking": False},
            "vllm_xargs": {"diffusion_max_steps": 8},
            "something_new": [1, {"a": None}],
        },
    )
    body = diffusion_sim.state.last_body
    assert body["model"] == DIFFUSION_MODEL
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["vllm_xargs"] == {"diffusion_max_steps": 8}
    assert body["something_new"] == [1, {"a": None}]


def test_backend_gets_its_own_key_never_the_clients(gateway, diffusion_sim):
    client(gateway).chat.completions.create(model="auto", messages=HELLO)
    headers = diffusion_sim.state.last_headers
    assert headers["authorization"] == "Bearer sim-diffusion-key"
    assert gateway.key not in str(headers)


def test_bad_key_is_authentication_error(gateway):
    with pytest.raises(openai.AuthenticationError) as info:
        client(gateway, key="gw-not-a-real-key").chat.completions.create(model="auto", messages=HELLO)
    assert info.value.status_code == 401
    assert "gw-not-a-real-key" not in info.value.response.text


def test_unknown_model_is_not_found(gateway):
    with pytest.raises(openai.NotFoundError) as info:
        client(gateway).chat.completions.create(model="gpt-17", messages=HELLO)
    assert info.value.body["code"] == "model_not_found"


def test_backend_rejection_passes_through_as_bad_request(gateway):
    # Pinned to diffusion, a seed gets the diffusion backend's own 400 (docs/backends.md).
    with pytest.raises(openai.BadRequestError) as info:
        client(gateway).chat.completions.create(model="diffusion", messages=HELLO, seed=7)
    assert "not yet supported with diffusion" in info.value.message
    assert info.value.response.headers["x-gateway-backend"] == "diffusion"


def test_the_request_id_is_the_gateways_and_the_clients_is_kept_apart(gateway, ar_sim, caplog):
    """A client that sends another tenant's request id gets the gateway's own id back, and that id is
    what the backend, the log line and the trace see; the client's id is logged as client_request_id."""
    caplog.set_level(logging.INFO, logger="gateway.request")
    r = httpx.post(
        gateway.base_url + "/chat/completions",
        json={"model": AR_MODEL, "messages": HELLO},
        headers={"authorization": f"Bearer {gateway.key}", "x-request-id": "someone-elses-id"},
    )
    assert r.status_code == 200
    ours = r.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", ours) and r.headers.get_list("x-request-id") == [ours]
    assert ar_sim.state.last_headers["x-request-id"] == ours

    def line() -> dict | None:
        lines = [getattr(rec, "fields", {}) for rec in caplog.records if rec.name == "gateway.request"]
        return next((f for f in lines if f.get("request_id") == ours), None)

    assert wait_for(lambda: line() is not None)
    assert line()["client_request_id"] == "someone-elses-id"
    # An id that is too long or not printable ASCII is dropped, not patched up.
    for bad in ("x" * 129, "bad id\twith junk"):
        other = httpx.get(gateway.url + "/healthz", headers={"x-request-id": bad})
        assert re.fullmatch(r"[0-9a-f]{32}", other.headers["x-request-id"])
