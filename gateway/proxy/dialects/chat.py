"""OpenAI's chat completions and completions: the shape the rest of the gateway reads (its chat view is the
request itself), streams of ``data:`` chunks ending with ``data: [DONE]``, answers in ``choices``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gateway.proxy.dialects.base import Until, enough, json_or_none
from gateway.proxy.quality import Answer
from gateway.proxy.sse import DONE, error_event

__all__ = ["MARKERS", "answer_of_body", "answer_of_events", "stream_failure"]

MARKERS = (b"[DONE]", b'"usage"', b'"error"')


def stream_failure(message: str, code: str) -> bytes:
    return error_event(message, "server_error", code) + DONE


def answer_of_body(body: dict[str, Any]) -> Answer:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return Answer(finished=True)
    choice = choices[0]
    if isinstance(choice.get("message"), dict):
        return Answer.from_message(choice["message"])
    return Answer(content=str(choice.get("text") or ""), finished=True)


def answer_of_events(events: Iterable[bytes], until: Until | None = None) -> Answer:
    answer = Answer()
    calls: dict[int, list[str]] = {}
    for event in events:
        if enough(answer, calls, until):
            break
        if not event.startswith(b"data:"):
            continue
        data = event[5:].strip()
        if data == b"[DONE]":
            answer.finished = True
            continue
        obj = json_or_none(data)
        choices = obj.get("choices") if isinstance(obj, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            continue
        choice = choices[0]
        if choice.get("finish_reason"):
            answer.finished = True
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            answer.content += str(choice.get("text") or "")
            continue
        answer.content += str(delta.get("content") or "")
        answer.reasoning += str(delta.get("reasoning") or delta.get("reasoning_content") or "")
        for call in delta.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            slot = calls.setdefault(int(call.get("index") or 0), ["", ""])
            raw = call.get("function")
            function: dict[str, Any] = raw if isinstance(raw, dict) else {}
            slot[0] += str(function.get("name") or "")
            slot[1] += str(function.get("arguments") or "")
    answer.tool_calls = [(name, args) for _, (name, args) in sorted(calls.items())]
    return answer
