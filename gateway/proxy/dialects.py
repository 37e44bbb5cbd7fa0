"""The four request dialects the gateway proxies, and what it needs to know about each.

``/v1/chat/completions`` and ``/v1/completions`` are OpenAI's; ``/v1/responses`` is OpenAI's Responses
API and ``/v1/messages`` Anthropic's Messages API, both of which vLLM serves (docs/backends.md) and agent
frameworks use. The proxy treats them alike (auth, limits, routing, fallbacks, telemetry); only these
differ, and live here:

* the **chat view** of a request: Responses ``input``/``instructions`` and Anthropic ``system``/content
  blocks rewritten as chat messages and chat-style tools, so that routing features and quality checks
  read one shape (the body sent upstream is never rewritten from it);
* **usage**: ``prompt/completion_tokens`` or ``input/output_tokens``, with reasoning tokens where given;
* **streams**: chat and completions end with ``data: [DONE]``; Responses streams end with a
  ``response.completed`` (or ``.incomplete``/``.failed``) event and Anthropic streams with
  ``message_stop``; usage and errors arrive in named events;
* the **answer** a quality check reads, from a body or from held stream events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import orjson

from gateway.proxy.sse import DONE, EventInfo, EventSplitter, Usage, error_event, inspect_event
from gateway.routing.features import INCOMPATIBLE_PARAMS
from gateway.routing.quality import Answer

__all__ = [
    "MARKERS",
    "OUTPUT_LIMITS",
    "PATHS",
    "REQUIRED",
    "Endpoint",
    "answer_of_body",
    "answer_of_events",
    "chat_view",
    "guess_endpoint",
    "inspect",
    "stream_failure",
]

Endpoint = Literal["chat", "completions", "responses", "messages"]

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

_RESPONSES_END = frozenset({"response.completed", "response.incomplete", "response.failed"})
_RESPONSES_MARKERS = (*(name.encode() for name in _RESPONSES_END), b"error")


def guess_endpoint(body: bytes) -> Endpoint:
    """The dialect of a body given without its path (POST /v1/gateway/route, ``gateway route``)."""
    if b'"messages"' in body:
        return "chat"
    if b'"input"' in body:
        return "responses"
    return "completions" if b'"prompt"' in body else "chat"


# ---- the chat view --------------------------------------------------------------------------------------


def chat_view(payload: dict[str, Any], endpoint: Endpoint) -> dict[str, Any]:
    """The request as chat completions would carry it, for routing and quality checks only."""
    if endpoint == "responses":
        return _responses_view(payload)
    if endpoint == "messages":
        return _messages_view(payload)
    return payload


_COMMON = (
    *INCOMPATIBLE_PARAMS,
    "temperature",
    "top_logprobs",
    "structured_outputs",
    "vllm_xargs",
    "chat_template_kwargs",
    "max_tokens",
)


def _copy_common(payload: dict[str, Any], view: dict[str, Any]) -> None:
    """Fields both APIs share with chat (vLLM's Responses request has its sampling extras too)."""
    for key in _COMMON:
        if key in payload:
            view[key] = payload[key]
    if "max_output_tokens" in payload:
        view["max_tokens"] = payload["max_output_tokens"]


def _responses_view(payload: dict[str, Any]) -> dict[str, Any]:
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


def _messages_view(payload: dict[str, Any]) -> dict[str, Any]:
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


# ---- streams -------------------------------------------------------------------------------------------


def _named(event: bytes) -> tuple[str, Any]:
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


_PLAIN = EventInfo()

# Bytes without which an event of each API tells the relay nothing (inspect returns _PLAIN): a run of
# events holding none of them is forwarded as it is, without being split or looked at.
MARKERS: dict[Endpoint, tuple[bytes, ...]] = {
    "chat": (b"[DONE]", b'"usage"', b'"error"'),
    "completions": (b"[DONE]", b'"usage"', b'"error"'),
    "responses": _RESPONSES_MARKERS,
    "messages": (b"message_", b"error"),
}


def inspect(event: bytes, endpoint: Endpoint) -> EventInfo:
    """What the relay needs from one stream event: the end, usage, an in-band error."""
    if endpoint in ("chat", "completions"):
        return inspect_event(event)
    if not any(marker in event for marker in MARKERS[endpoint]):
        return _PLAIN  # deltas: the bulk of a stream, not parsed
    name, obj = _named(event)
    if not isinstance(obj, dict):
        return _PLAIN
    if endpoint == "responses":
        if name == "error":
            return EventInfo(error=obj)
        if name in _RESPONSES_END:
            response = obj.get("response")
            usage = Usage.from_json(response.get("usage")) if isinstance(response, dict) else None
            error = response.get("error") if isinstance(response, dict) else None
            failed = name == "response.failed"
            return EventInfo(done=True, usage=usage, error=(error or {}) if failed else None)
        return _PLAIN
    if name == "error":
        return EventInfo(error=obj.get("error") if isinstance(obj.get("error"), dict) else obj)
    if name == "message_stop":
        return EventInfo(done=True)
    if name == "message_start":
        message = obj.get("message")
        usage = Usage.from_json(message.get("usage")) if isinstance(message, dict) else None
        return EventInfo(usage=usage) if usage is not None else _PLAIN
    if name == "message_delta":
        usage = Usage.from_json(obj.get("usage"))
        return EventInfo(usage=usage) if usage is not None else _PLAIN
    return _PLAIN


def stream_failure(endpoint: Endpoint, message: str, code: str) -> bytes:
    """The in-band end of a stream that broke after its first byte, in the stream's own format."""
    body: dict[str, Any]
    if endpoint == "responses":
        body = {"type": "error", "code": code, "message": message, "param": None}
        return b"event: error\ndata: " + orjson.dumps(body) + b"\n\n"
    if endpoint == "messages":
        body = {"type": "error", "error": {"type": "api_error", "message": message}}
        return b"event: error\ndata: " + orjson.dumps(body) + b"\n\n"
    return error_event(message, "server_error", code) + DONE


# ---- answers, for the quality checks -----------------------------------------------------------------


def answer_of_body(body: Any, endpoint: Endpoint) -> Answer:
    if not isinstance(body, dict):
        return Answer(finished=True)
    if endpoint == "responses":
        answer = Answer(finished=True)
        for item in body.get("output") or ():
            if isinstance(item, dict):
                _responses_item(item, answer)
        return answer
    if endpoint == "messages":
        answer = Answer(finished=True)
        for block in body.get("content") or ():
            if isinstance(block, dict):
                _messages_block(block, answer)
        return answer
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return Answer(finished=True)
    choice = choices[0]
    if isinstance(choice.get("message"), dict):
        return Answer.from_message(choice["message"])
    return Answer(content=str(choice.get("text") or ""), finished=True)


def _responses_item(item: dict[str, Any], answer: Answer) -> None:
    kind = item.get("type")
    if kind == "function_call":
        answer.tool_calls.append((str(item.get("name") or ""), str(item.get("arguments") or "")))
    for part in item.get("content") or ():
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            if kind == "reasoning":
                answer.reasoning += part["text"]
            elif kind == "message":
                answer.content += part["text"]


def _messages_block(block: dict[str, Any], answer: Answer) -> None:
    kind = block.get("type")
    if kind == "text":
        answer.content += str(block.get("text") or "")
    elif kind == "thinking":
        answer.reasoning += str(block.get("thinking") or "")
    elif kind == "tool_use":
        answer.tool_calls.append((str(block.get("name") or ""), orjson.dumps(block.get("input")).decode()))


def answer_of_events(
    chunks: list[bytes], endpoint: Endpoint, until: Callable[[Answer], bool] | None = None
) -> Answer:
    """The answer so far, from held stream bytes; with ``until``, only as far as the first event after
    which ``until(answer)`` holds (a held read can be a whole stream of small events: parsing all of them
    to check the first is most of a stream's cost)."""
    events = EventSplitter().feed(b"".join(chunks))
    if endpoint == "responses":
        return _responses_events(events, until)
    if endpoint == "messages":
        return _messages_events(events, until)
    return _chat_events(events, until)


def _enough(answer: Answer, calls: dict[Any, list[str]], until: Callable[[Answer], bool] | None) -> bool:
    if until is None:
        return False
    if calls:  # else the answer's own empty list stands: no list built per event on the hold's path
        answer.tool_calls = [(name, args) for name, args in calls.values()]
    return until(answer)


def _chat_events(events: list[bytes], until: Callable[[Answer], bool] | None = None) -> Answer:
    answer = Answer()
    calls: dict[int, list[str]] = {}
    for event in events:
        if _enough(answer, calls, until):
            break
        if not event.startswith(b"data:"):
            continue
        data = event[5:].strip()
        if data == b"[DONE]":
            answer.finished = True
            continue
        obj = _json(data)
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


def _responses_events(events: list[bytes], until: Callable[[Answer], bool] | None = None) -> Answer:
    answer = Answer()
    calls: dict[str, list[str]] = {}
    for event in events:
        if _enough(answer, calls, until):
            break
        name, obj = _named(event)
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
        elif name in _RESPONSES_END:
            answer.finished = True
    answer.tool_calls = [(name, args) for name, args in calls.values()]
    return answer


def _messages_events(events: list[bytes], until: Callable[[Answer], bool] | None = None) -> Answer:
    answer = Answer()
    calls: dict[int, list[str]] = {}
    for event in events:
        if _enough(answer, calls, until):
            break
        name, obj = _named(event)
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


def _json(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
