"""/v1/responses and Anthropic-style /v1/messages: proxied with the same auth, limits, routing, fallbacks
and telemetry as chat completions, driven by the official openai and anthropic SDKs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import orjson
import pytest

from gateway.app import create_app
from gateway.chat_view import chat_view
from gateway.proxy.dialects import answer_of_body, answer_of_events, inspect
from gateway.routing import extract_features
from gateway.simulator import SimulatorSettings, create_simulator
from tests.support import (
    AR_MODEL,
    DIFFUSION_MODEL,
    ServerThread,
    gateway_settings,
    reasons,
    wait_for,
    write_key,
)

WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def oai(gw: Any, key: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.base_url, api_key=key or gw.key, max_retries=0, timeout=10)


def claude(gw: Any, key: str | None = None) -> anthropic.Anthropic:
    # Anthropic's SDK sends its key as x-api-key, which the gateway accepts like a bearer token.
    return anthropic.Anthropic(base_url=gw.url, api_key=key or gw.key, max_retries=0, timeout=10)


def settled_tokens(gw: Any, expected: int) -> bool:
    """Tokens are counted just after a request's last byte: wait for the count instead of racing it."""
    return wait_for(
        lambda: gw.metric("gateway_tokens_total", backend="diffusion", type="completion") == expected
    )


# ---- the Responses API ---------------------------------------------------------------------------------


def test_responses_chit_chat_goes_to_diffusion_streamed_or_not(gateway):
    raw = oai(gateway).responses.with_raw_response.create(model="auto", input="Hello there, how are you?")
    reply = raw.parse()
    assert raw.headers["x-gateway-backend"] == "diffusion"
    assert reasons(raw.headers["x-gateway-route"]) == "default:score"
    assert reply.model == DIFFUSION_MODEL and reply.output_text
    assert settled_tokens(gateway, reply.usage.output_tokens)

    text = ""
    completed = None
    with oai(gateway).responses.create(
        model="auto", input="Hello there, how are you?", stream=True
    ) as events:
        for event in events:
            if event.type == "response.output_text.delta":
                text += event.delta
            elif event.type == "response.completed":
                completed = event.response
    assert text == reply.output_text  # the same answer, cut per canvas
    assert completed is not None and completed.usage.output_tokens == reply.usage.output_tokens
    # Usage read from the stream's last event counts too.
    assert settled_tokens(gateway, 2 * reply.usage.output_tokens)


def test_responses_tools_go_to_autoregressive(gateway):
    raw = oai(gateway).responses.with_raw_response.create(
        model="auto", input="Weather in Paris?", tools=[{"type": "function", **WEATHER}]
    )
    reply = raw.parse()
    assert raw.headers["x-gateway-backend"] == "autoregressive"
    assert "tool-heavy:tools" in raw.headers["x-gateway-route"]
    calls = [item for item in reply.output if item.type == "function_call"]
    assert calls and calls[0].name == "get_weather" and "city" in orjson.loads(calls[0].arguments)


def test_responses_rough_diffusion_answer_falls_back(gateway):
    for stream in (False, True):
        r = httpx.post(
            gateway.base_url + "/responses",
            json={"model": "auto", "input": "Hello!", "stream": stream},
            headers={"authorization": f"Bearer {gateway.key}", "x-sim-fault-diffusion": "rough=empty"},
        )
        assert r.status_code == 200
        assert r.headers["x-gateway-backend"] == "autoregressive"
        assert r.headers["x-gateway-fallback"] == "diffusion>autoregressive:quality:empty"


def test_responses_stream_broken_mid_answer_ends_in_band(gateway):
    r = httpx.post(
        gateway.base_url + "/responses",
        json={"model": AR_MODEL, "input": "Tell me a story.", "stream": True},
        headers={"authorization": f"Bearer {gateway.key}", "x-sim-fault-autoregressive": "drop_after=3"},
    )
    assert r.status_code == 200
    last = r.text.strip().split("\n\n")[-1]
    assert last.startswith("event: error") and "backend_stream_interrupted" in last
    assert "[DONE]" not in r.text  # a Responses stream never carries one


# ---- the Anthropic Messages API -----------------------------------------------------------------------


def test_messages_with_the_anthropic_sdk(gateway):
    client = claude(gateway)
    raw = client.messages.with_raw_response.create(
        model="auto", max_tokens=200, messages=[{"role": "user", "content": "Hi! How is it going?"}]
    )
    message = raw.parse()
    assert raw.headers["x-gateway-backend"] == "diffusion"
    assert message.content[0].type == "text" and message.content[0].text
    assert message.usage.output_tokens > 0

    with client.messages.stream(
        model="auto", max_tokens=200, messages=[{"role": "user", "content": "Hi! How is it going?"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == message.content[0].text
    assert final.usage.output_tokens == message.usage.output_tokens
    assert final.usage.input_tokens == message.usage.input_tokens
    assert settled_tokens(gateway, 2 * message.usage.output_tokens)


def test_messages_tool_use_and_agent_turns_go_to_autoregressive(gateway):
    client = claude(gateway)
    tool = {
        "name": WEATHER["name"],
        "description": WEATHER["description"],
        "input_schema": WEATHER["parameters"],
    }
    question = {"role": "user", "content": "What's the weather in Paris?"}
    raw = client.messages.with_raw_response.create(
        model="auto", max_tokens=200, tools=[tool], messages=[question]
    )
    first = raw.parse()
    assert raw.headers["x-gateway-backend"] == "autoregressive"
    use = next(block for block in first.content if block.type == "tool_use")
    assert use.name == "get_weather" and "city" in use.input and first.stop_reason == "tool_use"

    # The tool result goes back: still the middle of a tool exchange.
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "18 C"}]}
    raw = client.messages.with_raw_response.create(
        model="auto",
        max_tokens=200,
        tools=[tool],
        messages=[question, {"role": "assistant", "content": first.content}, result],
    )
    assert raw.headers["x-gateway-backend"] == "autoregressive"
    assert raw.parse().content[0].type == "text"


def test_messages_errors_use_anthropic_envelope(make_gateway):
    gw = make_gateway()
    with pytest.raises(anthropic.AuthenticationError) as denied:
        claude(gw, key="gw-not-a-key").messages.create(
            model="auto", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    body = denied.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "authentication_error" and "gw-not-a-key" not in str(body)
    limited = write_key(gw.keys_file, "limited", limits={"requests_per_minute": 1})
    client = claude(gw, key=limited)
    assert wait_for(
        # A body that is not JSON: 400 once the key file's reload knows the key (401 before), and never
        # counted against its one request a minute (a request is counted once its body is read and
        # checked; GET /v1/models counts).
        lambda: (
            httpx.post(gw.url + "/v1/messages", content=b"{", headers={"x-api-key": limited}).status_code
            == 400
        )
    )
    client.messages.create(model="auto", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(anthropic.RateLimitError):
        client.messages.create(model="auto", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    r = httpx.post(gw.url + "/v1/messages", content=b"{", headers={"x-api-key": gw.key})
    assert r.status_code == 400
    assert r.json()["type"] == "error" and r.json()["error"]["type"] == "invalid_request_error"


# ---- backends that do not serve an API -----------------------------------------------------------------


@pytest.fixture(scope="module")
def chat_only_sims() -> Iterator[tuple[str, str]]:
    """Two simulated backends like an older vLLM: chat and completions only."""
    servers = []
    for kind, key in (("diffusion", "sim-diffusion-key"), ("autoregressive", "sim-ar-key")):
        app, _ = create_simulator(
            SimulatorSettings(kind=kind, profile="instant", api_key=key, endpoints={"chat", "completions"})
        )
        servers.append(ServerThread(app).__enter__())
    try:
        yield servers[0].url, servers[1].url
    finally:
        for server in servers:
            server.__exit__()


def test_backend_without_the_route_gives_a_clear_404(chat_only_sims, tmp_path):
    from pydantic import SecretStr

    keys = tmp_path / "keys.yaml"
    key = write_key(keys, "alice")
    settings = gateway_settings(*chat_only_sims, auth={"keys_file": str(keys)})
    backends = [
        b.model_copy(
            update={"api_key": SecretStr("sim-diffusion-key" if b.kind == "diffusion" else "sim-ar-key")}
        )
        for b in settings.backends
    ]
    with ServerThread(create_app(settings.model_copy(update={"backends": backends}))) as server:
        r = httpx.post(
            server.url + "/v1/responses",
            json={"model": "auto", "input": "hi"},
            headers={"authorization": f"Bearer {key}"},
        )
        # The diffusion backend answered 404 for the route: the next one was tried, then a clear 404.
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "endpoint_not_served"
        assert r.headers["x-gateway-fallback"] == "diffusion>autoregressive:unserved"
        r = httpx.post(
            server.url + "/v1/messages",
            json={"model": AR_MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
            headers={"x-api-key": key},
        )
        assert r.status_code == 404
        assert r.json()["type"] == "error" and r.json()["error"]["type"] == "not_found_error"
        # Chat still works on the same backends.
        r = httpx.post(
            server.url + "/v1/chat/completions",
            json={"model": "auto", "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": f"Bearer {key}"},
        )
        assert r.status_code == 200


def test_configured_endpoints_route_around_a_backend(make_gateway):
    gw = make_gateway(per_backend={"diffusion": {"endpoints": frozenset({"chat", "completions"})}})
    raw = oai(gw).responses.with_raw_response.create(model="auto", input="Hello there!")
    assert raw.headers["x-gateway-backend"] == "autoregressive"
    assert reasons(raw.headers["x-gateway-route"]) == "default:score,unserved:diffusion"
    with pytest.raises(openai.NotFoundError) as missing:
        oai(gw).responses.create(model=DIFFUSION_MODEL, input="Hello there!")
    assert missing.value.code == "endpoint_not_served"


# ---- the dialects, unit by unit ------------------------------------------------------------------------


def test_chat_view_of_a_responses_agent_turn():
    payload = {
        "model": "auto",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "get_weather",
                "arguments": '{"city":"Paris"}',
            },
            {"type": "function_call_output", "call_id": "c1", "output": "18 C"},
        ],
        "tools": [{"type": "function", **WEATHER}],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "reasoning": {"effort": "high"},
        "text": {"format": {"type": "json_schema", "name": "x", "schema": {}}},
    }
    view = chat_view(payload, "responses")
    assert [m["role"] for m in view["messages"]] == ["system", "user", "assistant", "tool"]
    features = extract_features(view, "responses")
    assert features.has_tools and features.tool_choice_forced and features.agent_loop
    assert features.thinking and features.structured_output


def test_chat_view_of_an_anthropic_request():
    payload = {
        "model": "auto",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [
            {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": "AA=="}}]},
        ],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "any"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "temperature": 0.3,
    }
    features = extract_features(chat_view(payload, "messages"), "messages")
    assert features.image and features.has_tools and features.tool_choice_forced and features.thinking
    assert features.temperature_unsupported


def event(name: str, **body: Any) -> bytes:
    return f"event: {name}\ndata: ".encode() + orjson.dumps({"type": name, **body}) + b"\n\n"


def test_answers_and_usage_per_dialect():
    body = {
        "output": [
            {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "hmm"}]},
            {"type": "message", "content": [{"type": "output_text", "text": "Hi"}]},
            {"type": "function_call", "name": "f", "arguments": "{"},
        ]
    }
    answer = answer_of_body(body, "responses")
    assert (answer.content, answer.reasoning, answer.tool_calls) == ("Hi", "hmm", [("f", "{")])
    message = {
        "content": [{"type": "text", "text": "Yo"}, {"type": "tool_use", "name": "g", "input": {"a": 1}}]
    }
    answer = answer_of_body(message, "messages")
    assert answer.content == "Yo" and answer.tool_calls == [("g", '{"a":1}')]

    start = event("message_start", message={"usage": {"input_tokens": 7, "output_tokens": 1}})
    delta = event("message_delta", delta={}, usage={"output_tokens": 42})
    assert inspect(start, "messages").usage.prompt_tokens == 7
    assert inspect(delta, "messages").usage.merged(inspect(start, "messages").usage).completion_tokens == 42
    assert inspect(event("message_stop"), "messages").done
    usage = {"input_tokens": 3, "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 4}}
    info = inspect(event("response.completed", response={"usage": usage}), "responses")
    assert info.done and info.usage is not None and info.usage.reasoning_tokens == 4
    deltas = [
        event("response.output_item.added", item={"id": "fc1", "type": "function_call", "name": "f"}),
        event("response.function_call_arguments.delta", item_id="fc1", delta='{"a"'),
        event("response.function_call_arguments.delta", item_id="fc1", delta=":1}"),
    ]
    assert answer_of_events(deltas, "responses").tool_calls == [("f", '{"a":1}')]
