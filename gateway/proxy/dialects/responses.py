"""OpenAI's Responses API (``/v1/responses``): streams of named events ending with
``response.completed`` (or ``.incomplete``/``.failed``), answers in ``output`` items."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from gateway.proxy.dialects.base import PLAIN, Until, enough, named
from gateway.proxy.quality import Answer
from gateway.proxy.sse import EventInfo, Usage

__all__ = ["MARKERS", "answer_of_body", "answer_of_events", "inspect", "stream_failure"]

_END = frozenset({"response.completed", "response.incomplete", "response.failed"})
MARKERS = (*(name.encode() for name in _END), b"error")


def inspect(name: str, obj: dict[str, Any]) -> EventInfo:
    """One named event holding a marker: the end (with usage), or an in-band error."""
    if name == "error":
        return EventInfo(error=obj)
    if name in _END:
        response = obj.get("response")
        usage = Usage.from_json(response.get("usage")) if isinstance(response, dict) else None
        error = response.get("error") if isinstance(response, dict) else None
        failed = name == "response.failed"
        return EventInfo(done=True, usage=usage, error=(error or {}) if failed else None)
    return PLAIN


def stream_failure(message: str, code: str) -> bytes:
    body = {"type": "error", "code": code, "message": message, "param": None}
    return b"event: error\ndata: " + orjson.dumps(body) + b"\n\n"


def answer_of_body(body: dict[str, Any]) -> Answer:
    answer = Answer(finished=True)
    for item in body.get("output") or ():
        if isinstance(item, dict):
            _item(item, answer)
    return answer


def _item(item: dict[str, Any], answer: Answer) -> None:
    kind = item.get("type")
    if kind == "function_call":
        answer.tool_calls.append((str(item.get("name") or ""), str(item.get("arguments") or "")))
    for part in item.get("content") or ():
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            if kind == "reasoning":
                answer.reasoning += part["text"]
            elif kind == "message":
                answer.content += part["text"]


def answer_of_events(events: Iterable[bytes], until: Until | None = None) -> Answer:
    answer = Answer()
    calls: dict[str, list[str]] = {}
    for event in events:
        if enough(answer, calls, until):
            break
        name, obj = named(event)
        if not isinstance(obj, dict):
            continue
        if name == "response.output_text.delta":
            answer.content += str(obj.get("delta") or "")
        elif name in ("response.reasoning_text.delta", "response.reasoning.delta"):
            answer.reasoning += str(obj.get("delta") or "")
        elif name == "response.output_item.added":
            item = obj.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call":
                calls[str(item.get("id") or len(calls))] = [str(item.get("name") or ""), ""]
        elif name == "response.function_call_arguments.delta" and calls:
            slot = calls.get(str(obj.get("item_id")), list(calls.values())[-1])
            slot[1] += str(obj.get("delta") or "")
        elif name in _END:
            answer.finished = True
    answer.tool_calls = [(name, args) for name, args in calls.values()]
    return answer
