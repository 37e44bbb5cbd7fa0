"""Anthropic's Messages API (``/v1/messages``): ``system`` and content blocks as chat messages, streams of
named events ending with ``message_stop`` (usage in ``message_start`` and ``message_delta``), answers in
``content`` blocks."""

from __future__ import annotations

from typing import Any

import orjson

from gateway.proxy.dialects.base import PLAIN, Until, copy_common, enough, named
from gateway.proxy.sse import EventInfo, Usage
from gateway.routing.quality import Answer

__all__ = ["MARKERS", "answer_of_body", "answer_of_events", "chat_view", "inspect", "stream_failure"]

MARKERS = (b"message_", b"error")


def chat_view(payload: dict[str, Any]) -> dict[str, Any]:
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
    copy_common(payload, view)
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


def inspect(name: str, obj: dict[str, Any]) -> EventInfo:
    """One named event holding a marker: the end, usage, or an in-band error."""
    if name == "error":
        return EventInfo(error=obj.get("error") if isinstance(obj.get("error"), dict) else obj)
    if name == "message_stop":
        return EventInfo(done=True)
    if name == "message_start":
        message = obj.get("message")
        usage = Usage.from_json(message.get("usage")) if isinstance(message, dict) else None
        return EventInfo(usage=usage) if usage is not None else PLAIN
    if name == "message_delta":
        usage = Usage.from_json(obj.get("usage"))
        return EventInfo(usage=usage) if usage is not None else PLAIN
    return PLAIN


def stream_failure(message: str, code: str) -> bytes:
    body = {"type": "error", "error": {"type": "api_error", "message": message}}
    return b"event: error\ndata: " + orjson.dumps(body) + b"\n\n"


def answer_of_body(body: dict[str, Any]) -> Answer:
    answer = Answer(finished=True)
    for block in body.get("content") or ():
        if isinstance(block, dict):
            _block(block, answer)
    return answer


def _block(block: dict[str, Any], answer: Answer) -> None:
    kind = block.get("type")
    if kind == "text":
        answer.content += str(block.get("text") or "")
    elif kind == "thinking":
        answer.reasoning += str(block.get("thinking") or "")
    elif kind == "tool_use":
        answer.tool_calls.append((str(block.get("name") or ""), orjson.dumps(block.get("input")).decode()))


def answer_of_events(events: list[bytes], until: Until | None = None) -> Answer:
    answer = Answer()
    calls: dict[int, list[str]] = {}
    for event in events:
        if enough(answer, calls, until):
            break
        name, obj = named(event)
        if not isinstance(obj, dict):
            continue
        if name == "content_block_start":
            block = obj.get("content_block")
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls[int(obj.get("index") or 0)] = [str(block.get("name") or ""), ""]
        elif name == "content_block_delta":
            delta = obj.get("delta")
            if not isinstance(delta, dict):
                continue
            kind = delta.get("type")
            if kind == "text_delta":
                answer.content += str(delta.get("text") or "")
            elif kind == "thinking_delta":
                answer.reasoning += str(delta.get("thinking") or "")
            elif kind == "input_json_delta" and int(obj.get("index") or 0) in calls:
                calls[int(obj.get("index") or 0)][1] += str(delta.get("partial_json") or "")
        elif name == "message_stop":
            answer.finished = True
    answer.tool_calls = [(name, args) for _, (name, args) in sorted(calls.items())]
    return answer
