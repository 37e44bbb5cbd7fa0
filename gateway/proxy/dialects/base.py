"""What every dialect shares: the endpoint names, their paths and fields, and the helpers the three
event formats parse with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from gateway.proxy.quality import Answer
from gateway.proxy.sse import EventInfo
from gateway.wire import Endpoint

__all__ = [
    "OUTPUT_LIMITS",
    "PATHS",
    "PLAIN",
    "REQUIRED",
    "Endpoint",
    "Until",
    "enough",
    "guess_endpoint",
    "json_or_none",
    "named",
]

PATHS: dict[Endpoint, str] = {
    "chat": "/v1/chat/completions",
    "completions": "/v1/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
}
REQUIRED: dict[Endpoint, str] = {
    "chat": "messages",
    "completions": "prompt",
    "responses": "input",
    "messages": "messages",
}
OUTPUT_LIMITS: dict[Endpoint, tuple[str, ...]] = {
    "chat": ("max_tokens", "max_completion_tokens"),
    "completions": ("max_tokens",),
    "responses": ("max_output_tokens",),
    "messages": ("max_tokens",),
}

# An event that tells the relay nothing (no end, usage or error): one shared instance, never changed.
PLAIN = EventInfo()

# Where a held read may stop parsing: the first event after which this holds of the answer so far.
Until = Callable[[Answer], bool]


def guess_endpoint(body: bytes) -> Endpoint:
    """The dialect of a body given without its path (POST /v1/gateway/route, ``gateway route``)."""
    if b'"messages"' in body:
        return "chat"
    if b'"input"' in body:
        return "responses"
    return "completions" if b'"prompt"' in body else "chat"


def named(event: bytes) -> tuple[str, Any]:
    """A named SSE event's type (its ``type`` field, else its ``event:`` line) and its parsed data."""
    name = ""
    data = b""
    for line in event.splitlines():
        if line.startswith(b"event:"):
            name = line[6:].strip().decode("utf-8", "replace")
        elif line.startswith(b"data:"):
            data += line[5:].strip()
    if not data:
        return name, None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return name, None
    if isinstance(obj, dict) and isinstance(obj.get("type"), str):
        name = obj["type"]
    return name, obj


def json_or_none(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def enough(answer: Answer, calls: dict[Any, list[str]], until: Until | None) -> bool:
    """Whether a held read has seen enough of the answer (``until``), with the tool calls so far in it."""
    if until is None:
        return False
    if calls:  # else the answer's own empty list stands: no list built per event on the hold's path
        answer.tool_calls = [(name, args) for name, args in calls.values()]
    return until(answer)
