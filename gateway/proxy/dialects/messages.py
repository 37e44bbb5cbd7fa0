"""Anthropic's Messages API (``/v1/messages``): streams of named events ending with ``message_stop``
(usage in ``message_start`` and ``message_delta``), answers in ``content`` blocks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from gateway.proxy.dialects.base import PLAIN, Until, enough, named
from gateway.proxy.quality import Answer
from gateway.proxy.sse import EventInfo, Usage

__all__ = ["MARKERS", "answer_of_body", "answer_of_events", "inspect", "stream_failure"]

MARKERS = (b"message_", b"error")


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


def answer_of_events(events: Iterable[bytes], until: Until | None = None) -> Answer:
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
