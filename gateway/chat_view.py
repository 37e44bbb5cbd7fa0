"""The chat view of a request: a Responses or Anthropic Messages request as chat completions would carry
it (``instructions``/``input`` items, ``system`` and content blocks as chat messages; their tools as
chat-style tools), so that one reader serves all four APIs.

The gateway's routing features and quality checks read it (gateway.proxy.body), and so does the simulator,
which answers those requests as the equivalent chat request would be answered. The body sent upstream is
never rewritten from it. A shared leaf: it imports only ``gateway.wire``.

The view keeps whatever the diffusion backend cannot take, wherever the API put it (``content_kind``,
``asks_logprobs``): a non-text part of a tool result, a Responses ``include`` of logprobs.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.wire import DIFFUSION_UNSUPPORTED_SAMPLING, Endpoint

__all__ = ["asks_logprobs", "chat_view", "content_kind"]


def chat_view(payload: dict[str, Any], endpoint: Endpoint) -> dict[str, Any]:
    """The request as chat completions would carry it: read, never sent (a chat request is its own view)."""
    if endpoint == "responses":
        return _responses(payload)
    if endpoint == "messages":
        return _messages(payload)
    return payload


# Content parts that hold text, or a tool call's JSON, and nothing else: chat's, Responses' and
# Anthropic's names, and vLLM's own ("thinking", "tool_reference").
_TEXT_PARTS = frozenset(
    {
        "text",
        "input_text",
        "output_text",
        "refusal",
        "summary_text",
        "reasoning_text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_reference",
        "function_call",
        "custom_tool_call",
    }
)
# Parts and items that hold more content, and where: read through, at any depth.
_CONTAINERS: dict[str, tuple[str, ...]] = {
    "tool_result": ("content",),  # Anthropic
    "search_result": ("content",),  # Anthropic
    "function_call_output": ("output",),  # Responses: a string, or input_text/input_image parts
    "custom_tool_call_output": ("output",),
    "computer_call_output": ("output",),
    "reasoning": ("content", "summary"),
    "message": ("content",),
}
_IMAGE_PARTS = frozenset(
    {"image_url", "input_image", "image", "image_pil", "image_embeds", "video_url", "input_video", "video"}
)
# The keys vLLM reads a part's medium from when it has no type ({"image_url": "..."}); on a typed part
# they are suspect all the same.
_IMAGE_KEYS = ("image_url", "image_pil", "image_embeds", "video_url", "video_embeds")
_MEDIA_KEYS = ("input_audio", "audio_url", "audio_embeds", "prompt_embeds", "file", "file_data", "file_id")


def content_kind(content: Any) -> str | None:
    """``"image"`` when ``content`` (a message's content, any part or item, at any depth) holds an image
    or a video, else ``"media"`` when it holds any other part that is not text (audio, a file, embeddings,
    a kind this gateway does not know), else None. The diffusion engine has crashed on images and serves
    text only: anything that is not known to be text counts."""
    found: str | None = None
    pending = [content]
    while pending:  # a stack, not recursion: the body's depth is bounded, but need not cost frames
        value = pending.pop()
        if isinstance(value, list):
            pending.extend(value)
            continue
        if not isinstance(value, dict):
            continue  # a string part is text; a number or null is nothing
        kind = _part_kind(value)
        if kind == "image":
            return kind
        if kind == "media":
            found = kind
        for field in _CONTAINERS.get(str(value.get("type")), ()):
            pending.append(value.get(field))
    return found


def _part_kind(part: dict[str, Any]) -> str | None:
    """What one part is, not counting what it contains: "image", "media", or None (text or a container)."""
    kind = part.get("type")
    if kind in _IMAGE_PARTS or any(key in part for key in _IMAGE_KEYS):
        return "image"
    if any(key in part for key in _MEDIA_KEYS):
        return "media"
    if kind is None:
        return None if isinstance(part.get("text"), str) else "media"
    return None if kind in _TEXT_PARTS or kind in _CONTAINERS else "media"


def asks_logprobs(view: dict[str, Any], endpoint: str) -> bool:
    """Whether the request asks for log probabilities (the diffusion engine has crashed on them): on
    completions ``logprobs`` is a count and 0 asks for the chosen token's, on chat it is a
    flag; ``top_logprobs`` and vLLM's ``prompt_logprobs`` ask too, and a Responses ``include`` of
    ``message.output_text.logprobs`` reaches the view as chat's flag."""
    asked = view.get("logprobs")
    wants = asked is not None if endpoint == "completions" else bool(asked)
    return wants or view.get("top_logprobs") is not None or view.get("prompt_logprobs") is not None


_LOGPROBS_INCLUDE = "message.output_text.logprobs"


def _responses(payload: dict[str, Any]) -> dict[str, Any]:
    """OpenAI Responses: ``instructions`` and ``input`` items (messages, function calls and their outputs)."""
    messages: list[dict[str, Any]] = []
    if isinstance(payload.get("instructions"), str):
        messages.append({"role": "system", "content": payload["instructions"]})
    items = payload.get("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            call = {"name": item.get("name"), "arguments": item.get("arguments")}
            messages.append({"role": "assistant", "tool_calls": [{"type": "function", "function": call}]})
        elif kind == "function_call_output":
            output = item.get("output")
            # A list of parts (input_text, input_image, input_file) stays one: its images are seen.
            content = output if isinstance(output, list) else str(output or "")
            messages.append({"role": "tool", "content": content})
        elif isinstance(item.get("role"), str):
            messages.append({"role": item["role"], "content": item.get("content")})
        elif content_kind(item) is not None:
            # Another item (a computer call's screenshot, a kind this gateway does not know) with
            # something in it that is not text: kept, as the tool output it is, so that it is seen.
            messages.append({"role": "tool", "content": [item]})
    view: dict[str, Any] = {"messages": messages}
    tools = [
        {"type": "function", "function": {"name": t.get("name"), "parameters": t.get("parameters")}}
        for t in payload.get("tools") or ()
        if isinstance(t, dict) and t.get("type") == "function"
    ]
    if tools:
        view["tools"] = tools
    choice = payload.get("tool_choice")
    if choice == "required" or choice == "none":
        view["tool_choice"] = choice
    elif isinstance(choice, dict) and choice.get("type") == "function":
        view["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    reasoning = payload.get("reasoning")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
        view["reasoning_effort"] = reasoning["effort"]
    text = payload.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
        view["response_format"] = {"type": fmt["type"]}
    _copy_common(payload, view)
    include = payload.get("include")
    if isinstance(include, list) and _LOGPROBS_INCLUDE in include:
        view["logprobs"] = True
    return view


def _messages(payload: dict[str, Any]) -> dict[str, Any]:
    """Anthropic Messages: ``system``, content blocks (``tool_use``, ``tool_result``) and ``thinking``."""
    messages: list[dict[str, Any]] = []
    system = payload.get("system")
    if isinstance(system, str | list):
        messages.append({"role": "system", "content": system})
    for message in payload.get("messages") or ():
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        kinds = {b.get("type") for b in blocks if isinstance(b, dict)}
        if "tool_result" in kinds:
            text = _tool_result_text(blocks)
            # The message's blocks go along when any of them (a tool result's own included) is not
            # text: an image a tool returned reaches the engine as surely as one a user sent.
            rest = blocks if content_kind(blocks) is not None else []
            messages.append(
                {"role": "tool", "content": [{"type": "text", "text": text}, *rest] if rest else text}
            )
            continue
        converted: dict[str, Any] = {"role": message.get("role"), "content": content}
        if "tool_use" in kinds:
            converted["tool_calls"] = [
                {
                    "type": "function",
                    "function": {"name": b.get("name"), "arguments": orjson.dumps(b.get("input")).decode()},
                }
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "tool_use"
            ]
        messages.append(converted)
    view: dict[str, Any] = {"messages": messages}
    tools = [
        {"type": "function", "function": {"name": t.get("name"), "parameters": t.get("input_schema")}}
        for t in payload.get("tools") or ()
        if isinstance(t, dict) and isinstance(t.get("name"), str)
    ]
    if tools:
        view["tools"] = tools
    choice = payload.get("tool_choice")
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind == "any":
        view["tool_choice"] = "required"
    elif kind == "tool":
        assert isinstance(choice, dict)
        view["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    elif kind == "none":
        view["tool_choice"] = "none"
    _copy_common(payload, view)
    thinking = payload.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled"):
        view["chat_template_kwargs"] = {"enable_thinking": thinking["type"] == "enabled"}
    return view


def _tool_result_text(blocks: list[Any]) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [str(c.get("text") or "") for c in content if isinstance(c, dict)]
    return "\n".join(parts)


_COMMON = (
    *DIFFUSION_UNSUPPORTED_SAMPLING,
    "temperature",
    "logprobs",
    "top_logprobs",
    "prompt_logprobs",
    "structured_outputs",
    "vllm_xargs",
    "chat_template_kwargs",
    "max_tokens",
)


def _copy_common(payload: dict[str, Any], view: dict[str, Any]) -> None:
    """Fields Responses and Messages share with chat (vLLM's Responses request has its sampling extras)."""
    for key in _COMMON:
        if key in payload:
            view[key] = payload[key]
    if "max_output_tokens" in payload:
        view["max_tokens"] = payload["max_output_tokens"]
