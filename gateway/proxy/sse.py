"""Server-sent events as vLLM writes them: ``data: {json}\\n\\n`` events ending with ``data: [DONE]``.

The relay splits the byte stream into whole events (a TCP read may end mid-event), looks only at events
that can carry usage or an error, and forwards every other event's bytes untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.record import Usage

# Usage lives in the gateway.record leaf; named here too, as the type the events are read into.
__all__ = ["DONE", "EventInfo", "EventSplitter", "Usage", "error_event", "events_of", "inspect_event"]

DONE = b"data: [DONE]\n\n"


class EventSplitter:
    """Splits a byte stream into complete SSE events (each returned with its blank-line terminator)."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        data = self._buffer + chunk if self._buffer else chunk
        events: list[bytes] = []
        start = 0
        for stop in _event_ends(data):
            events.append(data[start:stop])
            start = stop
        self._buffer = data[start:]
        return events

    def split(self, chunk: bytes, markers: tuple[bytes, ...]) -> tuple[bytes, list[bytes]]:
        """The complete events in ``chunk``: the leading run in which no event holds a marker, as one
        block of bytes (nothing in it to look at), and the events from the first marker on, one by one."""
        data = self._buffer + chunk if self._buffer else chunk
        first = min((at for marker in markers if (at := data.find(marker)) != -1), default=-1)
        if first == -1:
            cut = _last_boundary(data, len(data))
            self._buffer = data[cut:]
            return data[:cut], []
        cut = _last_boundary(data, first)  # where the event holding the first marker starts
        self._buffer = b""
        return data[:cut], self.feed(data[cut:])

    @property
    def pending(self) -> bytes:
        return self._buffer


def events_of(data: bytes) -> Iterator[bytes]:
    """The complete events in ``data``, one at a time (an incomplete last one is left out): a reader that
    stops at the first event it needs does not pay for splitting the rest (a held read can be a whole
    stream of hundreds of events, to check the first)."""
    start = 0
    for stop in _event_ends(data):
        yield data[start:stop]
        start = stop


def _event_ends(data: bytes) -> Iterator[int]:
    """Where each complete event in ``data`` ends, in order."""
    start = 0
    # Each terminator is searched again only once the scan has passed it: vLLM writes LF only, and
    # searching the whole rest of a 40 KB read for a CRLF pair before every event was quadratic.
    end = data.find(b"\n\n")
    crlf = data.find(b"\r\n\r\n")
    while True:
        if end != -1 and end < start:
            end = data.find(b"\n\n", start)
        if crlf != -1 and crlf < start:
            crlf = data.find(b"\r\n\r\n", start)
        if crlf != -1 and (end == -1 or crlf < end):
            start = crlf + 4
        elif end != -1:
            start = end + 2
        else:
            return
        yield start


def _last_boundary(data: bytes, end: int) -> int:
    """Where the last complete event before ``end`` ends (0 if none does)."""
    lf = data.rfind(b"\n\n", 0, end)
    crlf = data.rfind(b"\r\n\r\n", 0, end)
    return max(lf + 2 if lf != -1 else 0, crlf + 4 if crlf != -1 else 0)


@dataclass(frozen=True, slots=True)  # frozen: _PLAIN below is one instance shared by every event
class EventInfo:
    done: bool = False
    usage: Usage | None = None
    # The usage-only chunk that include_usage adds (``"choices": []``): dropped for clients that did
    # not ask for it, so they get exactly what vLLM would have sent them.
    usage_only: bool = False
    error: dict[str, Any] | None = None


_PLAIN = EventInfo()


def inspect_event(event: bytes) -> EventInfo:
    if not event.startswith(b"data:"):
        return _PLAIN  # comments (": keep-alive"), event:/id: lines: forwarded as they are
    data = event[5:].strip()
    if data == b"[DONE]":
        return EventInfo(done=True)
    if b'"usage"' not in data and b'"error"' not in data:
        return _PLAIN
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _PLAIN
    if not isinstance(obj, dict):
        return _PLAIN
    error = obj.get("error")
    if isinstance(error, dict) and "choices" not in obj:
        return EventInfo(error=error)
    usage = Usage.from_json(obj.get("usage"))
    if usage is None:
        return _PLAIN
    return EventInfo(usage=usage, usage_only=obj.get("choices") == [])


def error_event(message: str, type_: str, code: str) -> bytes:
    body = orjson.dumps({"error": {"message": message, "type": type_, "param": None, "code": code}})
    return b"data: " + body + b"\n\n"
