"""The chat view of a request: a Responses or Anthropic Messages request as chat completions would carry
it (``instructions``/``input`` items, ``system`` and content blocks as chat messages; their tools as
chat-style tools), so that one reader serves all four APIs.

The gateway's routing features and quality checks read it (gateway.proxy.body), and so does the simulator,
which answers those requests as the equivalent chat request would be answered. The body sent upstream is
never rewritten from it. A shared leaf: it imports only ``gateway.wire``.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.wire import DIFFUSION_UNSUPPORTED_SAMPLING, Endpoint

__all__ = ["chat_view"]


def chat_view(payload: dict[str, Any], endpoint: Endpoint) -> dict[str, Any]:
    """The request as chat completions would carry it: read, never sent (a chat request is its own view)."""
    if endpoint == "responses":
        return _responses(payload)
    if endpoint == "messages":
        return _messages(payload)
    return payload


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
            messages.append({"role": "tool", "content": str(item.get("output") or "")})
        elif isinstance(item.get("role"), str):
            messages.append({"role": item["role"], "content": item.get("content")})
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
            messages.append({"role": "tool", "content": _tool_result_text(blocks)})
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
    "top_logprobs",
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
