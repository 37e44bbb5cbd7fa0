"""The diffusion compatibility guard, per API: what could crash DiffusionGemma's engine (images, logprobs)
or that a text-only engine cannot take (audio, files, embeddings) never reaches the diffusion backend.

Each case goes through the request's parsing, its chat view and the routing decision, as a live request
does: with ``model: auto`` it is kept off the diffusion backend (not even a fallback there), and a request
that names the diffusion backend gets 400 ``unsupported_on_backend``. The guard reads ``logprobs`` per API
(a count on completions, where 0 asks too), ``prompt_logprobs``, a Responses ``include``, and content that
is not text at any depth: chat parts, Responses items and tool outputs, Anthropic blocks and tool results.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from gateway.errors import InvalidRequest
from gateway.proxy.body import parse_request
from gateway.proxy.dialects import PATHS, Endpoint
from gateway.routing import BackendView, RouteInput, decide, extract_features
from gateway.routing.settings import RoutingSettings
from tests.support import DIFFUSION_MODEL

D = BackendView(name="diffusion", kind="diffusion", model=DIFFUSION_MODEL, max_concurrency=4)
A = BackendView(name="autoregressive", kind="autoregressive", model="g4", max_concurrency=256)
PNG = "data:image/png;base64,iVBORw0KGgo="


def chat(*content: Any, **extra: Any) -> dict[str, Any]:
    return {"model": "auto", "messages": [{"role": "user", "content": list(content) or "hi"}], **extra}


def text(value: str = "what is this?") -> dict[str, str]:
    return {"type": "text", "text": value}


CHAT_TOOL_LOOP = [
    {"role": "user", "content": "Take a screenshot."},
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shot"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "image_url", "image_url": {"url": PNG}}]},
]


def responses(*items: Any, **extra: Any) -> dict[str, Any]:
    return {"model": "auto", "input": list(items) or "hi", **extra}


def user_item(*parts: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "input_text", "text": "look"}, *parts]}


def call_output(output: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "What is on the screen?"},
        {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": output},
    ]


def messages(*turns: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "auto", "max_tokens": 64, "messages": list(turns), **extra}


IMAGE_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
}
TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]}


def tool_result(*content: Any, siblings: tuple[Any, ...] = ()) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": "t1", "content": list(content)}
    return {"role": "user", "content": [block, *siblings]}


# (case id, API, body, what the guard names)
CASES: list[tuple[str, Endpoint, dict[str, Any], str]] = [
    # -- chat completions: logprobs is a flag there, top_logprobs a count, prompt_logprobs vLLM's
    ("chat-logprobs", "chat", chat(logprobs=True), "logprobs"),
    ("chat-top-logprobs", "chat", chat(logprobs=True, top_logprobs=2), "logprobs"),
    ("chat-prompt-logprobs", "chat", chat(prompt_logprobs=0), "logprobs"),
    ("chat-image-embeds", "chat", chat(text(), {"type": "image_embeds", "image_embeds": "AAAA"}), "image"),
    ("chat-untyped-image", "chat", chat(text(), {"image_url": PNG}), "image"),
    (
        "chat-video",
        "chat",
        chat(text(), {"type": "video_url", "video_url": {"url": "https://x/v.mp4"}}),
        "image",
    ),
    (
        "chat-input-audio",
        "chat",
        chat(text(), {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}),
        "media",
    ),
    (
        "chat-audio-url",
        "chat",
        chat(text(), {"type": "audio_url", "audio_url": {"url": "https://x/a.wav"}}),
        "media",
    ),
    ("chat-file", "chat", chat(text(), {"type": "file", "file": {"file_data": "JVBERi0="}}), "media"),
    ("chat-unknown-part", "chat", chat(text(), {"type": "hologram", "data": "x"}), "media"),
    ("chat-image-in-a-tool-result", "chat", {"model": "auto", "messages": CHAT_TOOL_LOOP}, "image"),
    # -- completions: logprobs is a count, and 0 asks for the chosen token's
    ("completions-logprobs-0", "completions", {"model": "auto", "prompt": "Once", "logprobs": 0}, "logprobs"),
    ("completions-logprobs-3", "completions", {"model": "auto", "prompt": "Once", "logprobs": 3}, "logprobs"),
    (
        "completions-prompt-logprobs",
        "completions",
        {"model": "auto", "prompt": "Once", "prompt_logprobs": 0},
        "logprobs",
    ),
    (
        "completions-prompt-embeds",
        "completions",
        {"model": "auto", "prompt": "Once", "prompt_embeds": "AAAA"},
        "media",
    ),
    # -- Responses: include and top_logprobs ask for logprobs; parts in messages and in tool outputs
    (
        "responses-include-logprobs",
        "responses",
        responses(include=["message.output_text.logprobs"]),
        "logprobs",
    ),
    ("responses-top-logprobs", "responses", responses(top_logprobs=3), "logprobs"),
    (
        "responses-input-image",
        "responses",
        responses(user_item({"type": "input_image", "image_url": PNG})),
        "image",
    ),
    (
        "responses-input-file",
        "responses",
        responses(user_item({"type": "input_file", "file_data": "JVBERi0=", "filename": "a.pdf"})),
        "media",
    ),
    (
        "responses-input-audio",
        "responses",
        responses(user_item({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}})),
        "media",
    ),
    (
        "responses-image-in-a-function-output",
        "responses",
        responses(
            *call_output([{"type": "input_text", "text": "here"}, {"type": "input_image", "image_url": PNG}])
        ),
        "image",
    ),
    (
        "responses-computer-screenshot",
        "responses",
        responses(
            {"role": "user", "content": "Click OK."},
            {
                "type": "computer_call_output",
                "call_id": "c1",
                "output": {"type": "computer_screenshot", "image_url": PNG},
            },
        ),
        "image",
    ),
    # -- Anthropic Messages: blocks, and what a tool result holds
    ("messages-image", "messages", messages({"role": "user", "content": [text(), IMAGE_BLOCK]}), "image"),
    (
        "messages-image-in-a-tool-result",
        "messages",
        messages(
            {"role": "user", "content": "Take a screenshot."},
            TOOL_USE,
            tool_result(text("done"), IMAGE_BLOCK),
        ),
        "image",
    ),
    (
        "messages-image-beside-a-tool-result",
        "messages",
        messages(
            {"role": "user", "content": "Take a screenshot."},
            TOOL_USE,
            tool_result(text("done"), siblings=(IMAGE_BLOCK,)),
        ),
        "image",
    ),
    (
        "messages-document",
        "messages",
        messages(
            {
                "role": "user",
                "content": [
                    text("summarise"),
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
                    },
                ],
            }
        ),
        "media",
    ),
]

# Text only, however it is wrapped: the guard leaves these to the policy (the first ones go to diffusion).
CLEAN: list[tuple[str, Endpoint, dict[str, Any]]] = [
    ("chat-text-parts", "chat", chat(text("Hi! How was your weekend?"))),
    ("chat-logprobs-false", "chat", chat(logprobs=False)),
    ("completions-logprobs-null", "completions", {"model": "auto", "prompt": "Once", "logprobs": None}),
    ("responses-text", "responses", responses(user_item(), {"type": "reasoning", "summary": []})),
    ("responses-include-other", "responses", responses(include=["reasoning.encrypted_content"])),
    ("responses-text-function-output", "responses", responses(*call_output("18 C"))),
    ("messages-text", "messages", messages({"role": "user", "content": [text("Hello there")]})),
    ("messages-text-tool-result", "messages", messages(TOOL_USE, tool_result(text("18 C")))),
]


def route(body: dict[str, Any], endpoint: Endpoint, model: str = "auto"):
    parsed = parse_request(orjson.dumps({**body, "model": model}), endpoint, max_n=8, max_output_tokens=None)
    features = extract_features(parsed.view, endpoint)
    return features, decide(RouteInput(model=model, features=features), [D, A], RoutingSettings())


@pytest.mark.parametrize(("case", "endpoint", "body", "named"), CASES, ids=[c[0] for c in CASES])
def test_the_guard_keeps_it_off_diffusion_and_refuses_it_there(case, endpoint, body, named):
    features, decision = route(body, endpoint)
    assert named in features.incompatible, features
    assert f"incompatible:{named}" in decision.reasons
    assert "diffusion" not in decision.candidates  # not first, and no fallback there either
    for model in ("diffusion", DIFFUSION_MODEL):  # named by backend or by model id
        with pytest.raises(InvalidRequest) as refused:
            route(body, endpoint, model=model)
        assert refused.value.code == "unsupported_on_backend" and refused.value.status == 400
        assert named in refused.value.message


@pytest.mark.parametrize(("case", "endpoint", "body"), CLEAN, ids=[c[0] for c in CLEAN])
def test_text_alone_is_not_held_back(case, endpoint, body):
    features, _ = route(body, endpoint)
    assert features.incompatible == (), features
    route(body, endpoint, model="diffusion")  # no refusal


# One case per API, end to end: the diffusion simulator never sees the request.
LIVE = ["chat-image-in-a-tool-result", "completions-logprobs-0", "responses-include-logprobs"]
LIVE += ["messages-image-in-a-tool-result", "chat-input-audio"]


def test_live_requests_never_reach_the_diffusion_backend(gateway, diffusion_sim):
    headers = {"authorization": f"Bearer {gateway.key}"}
    by_id = {c[0]: c for c in CASES}
    before = diffusion_sim.state.started
    for case in LIVE:
        _, endpoint, body, named = by_id[case]
        url = gateway.url + PATHS[endpoint]
        served = httpx.post(url, json=body, headers=headers, timeout=10)
        assert served.status_code == 200, (case, served.text)
        assert served.headers["x-gateway-backend"] == "autoregressive", case
        assert f"incompatible:{named}" in served.headers["x-gateway-route"].split(","), case
        refused = httpx.post(url, json={**body, "model": DIFFUSION_MODEL}, headers=headers, timeout=10)
        assert refused.status_code == 400, (case, refused.text)
        assert refused.json()["error"]["code"] == "unsupported_on_backend", case
        dry = httpx.post(gateway.base_url + f"/gateway/route?api={endpoint}", json=body, headers=headers)
        assert dry.status_code == 200 and "diffusion" not in dry.json()["candidates"], case
    assert diffusion_sim.state.started == before
