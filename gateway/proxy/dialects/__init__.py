"""The four request dialects the gateway proxies, and what it needs to know about each.

``/v1/chat/completions`` and ``/v1/completions`` are OpenAI's; ``/v1/responses`` is OpenAI's Responses
API and ``/v1/messages`` Anthropic's Messages API, both of which vLLM serves (docs/backends.md) and agent
frameworks use. The proxy treats them alike (auth, limits, routing, fallbacks, telemetry); only these
differ, and live here (the chat view of a request, shared with the simulator, is gateway/chat_view.py):

* **usage**: ``prompt/completion_tokens`` or ``input/output_tokens``, with reasoning tokens where given;
* **streams**: chat and completions end with ``data: [DONE]``; Responses streams end with a
  ``response.completed`` (or ``.incomplete``/``.failed``) event and Anthropic streams with
  ``message_stop``; usage and errors arrive in named events;
* the **answer** a quality check reads, from a body or from held stream events.

One module per dialect (``chat``: chat and completions; ``responses``; ``messages``) and ``base`` for what
they share; the functions here pick the dialect's.
"""

from __future__ import annotations

from typing import Any

from gateway.proxy.dialects import chat, messages, responses
from gateway.proxy.dialects.base import (
    OUTPUT_LIMITS,
    PATHS,
    PLAIN,
    REQUIRED,
    Endpoint,
    Until,
    guess_endpoint,
    named,
)
from gateway.proxy.quality import Answer
from gateway.proxy.sse import EventInfo, events_of, inspect_event

__all__ = [
    "MARKERS",
    "OUTPUT_LIMITS",
    "PATHS",
    "REQUIRED",
    "Endpoint",
    "answer_of_body",
    "answer_of_events",
    "guess_endpoint",
    "inspect",
    "stream_failure",
]

# Bytes without which an event of each API tells the relay nothing (inspect returns PLAIN): a run of
# events holding none of them is forwarded as it is, without being split or looked at.
MARKERS: dict[Endpoint, tuple[bytes, ...]] = {
    "chat": chat.MARKERS,
    "completions": chat.MARKERS,
    "responses": responses.MARKERS,
    "messages": messages.MARKERS,
}


def inspect(event: bytes, endpoint: Endpoint) -> EventInfo:
    """What the relay needs from one stream event: the end, usage, an in-band error."""
    if endpoint in ("chat", "completions"):
        return inspect_event(event)
    if not any(marker in event for marker in MARKERS[endpoint]):
        return PLAIN  # deltas: the bulk of a stream, not parsed
    name, obj = named(event)
    if not isinstance(obj, dict):
        return PLAIN
    if endpoint == "responses":
        return responses.inspect(name, obj)
    return messages.inspect(name, obj)


def stream_failure(endpoint: Endpoint, message: str, code: str) -> bytes:
    """The in-band end of a stream that broke after its first byte, in the stream's own format."""
    if endpoint == "responses":
        return responses.stream_failure(message, code)
    if endpoint == "messages":
        return messages.stream_failure(message, code)
    return chat.stream_failure(message, code)


def answer_of_body(body: Any, endpoint: Endpoint) -> Answer:
    """The answer in a whole (non-streamed) body, for the quality checks."""
    if not isinstance(body, dict):
        return Answer(finished=True)
    if endpoint == "responses":
        return responses.answer_of_body(body)
    if endpoint == "messages":
        return messages.answer_of_body(body)
    return chat.answer_of_body(body)


def answer_of_events(chunks: list[bytes], endpoint: Endpoint, until: Until | None = None) -> Answer:
    """The answer so far, from held stream bytes; with ``until``, only as far as the first event after
    which ``until(answer)`` holds (a held read can be a whole stream of small events: parsing all of them
    to check the first is most of a stream's cost)."""
    events = events_of(b"".join(chunks))  # split as far as the parse goes
    if endpoint == "responses":
        return responses.answer_of_events(events, until)
    if endpoint == "messages":
        return messages.answer_of_events(events, until)
    return chat.answer_of_events(events, until)
