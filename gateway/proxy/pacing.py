"""Stream pacing: a diffusion backend's canvases re-chunked into a steady flow of small deltas.

A diffusion backend streams one whole canvas (up to 256 tokens) per chunk, after a long silence, so a chat
frontend's "typing" animation jumps. With pacing on, each text-bearing event is split into word-aligned
pieces, and the pieces go out evenly until ``budget`` seconds after the event arrived. Every piece is due
by its event's arrival plus the budget, and the end of the answer arrives after every text event, so the
end of the answer is never delayed by more than the budget. What is split: ``delta.content``,
``delta.reasoning`` (``reasoning_content``) and completions' ``text``, in single-choice events without tool
calls. Everything else (role, tool calls, finish reason, usage, ``[DONE]``, comments) keeps its bytes and
its order; tool calls are never split, so a client's parser sees them exactly as the backend wrote them.

:class:`Schedule` is the pure part (what goes out when, given arrival times) and is tested with a virtual
clock; :func:`pace` drives it with the event loop's clock, reading upstream while pieces are due.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.config import PacingSettings
from gateway.errors import InvalidRequest
from gateway.proxy.sse import EventSplitter

__all__ = ["PACING_HEADER", "Schedule", "pace", "pacing_budget", "split_event"]

PACING_HEADER = "x-gateway-pacing"

_WORD = re.compile(r"\S+\s*|\s+")
# Split pieces never cut a word; a "word" longer than this (CJK text, a URL) is cut by characters.
_LONG_WORD = 24
_TEXT_KEYS = ("reasoning", "reasoning_content", "content")


@dataclass(slots=True)
class _Item:
    data: bytes
    paced: bool  # takes a time slot (a piece of text); otherwise it goes out right after its predecessor


class Schedule:
    """Which queued events are due at a given time. No I/O and no clock of its own."""

    def __init__(self, budget: float, interval: float) -> None:
        self.budget = budget
        self.interval = interval
        self._queue: deque[_Item] = deque()
        self._slots = 0  # paced items in the queue
        self._deadline = 0.0  # when the last queued piece is due
        self._next = 0.0  # when the next piece may go out
        self._splitter = EventSplitter()

    @property
    def max_pieces(self) -> int:
        return max(1, int(self.budget / self.interval))

    def arrive(self, chunk: bytes, now: float) -> None:
        """Queue what the backend sent at ``now``."""
        was_idle = self._slots == 0
        texts = 0
        for event in self._splitter.feed(chunk):
            pieces = split_event(event, self.max_pieces)
            if pieces is None:
                self._queue.append(_Item(event, paced=False))
                continue
            texts += len(pieces)
            self._queue.extend(_Item(piece, paced=True) for piece in pieces)
        if texts:
            self._slots += texts
            # Everything queued is spread to at most a budget after this arrival: the backlog speeds up
            # smoothly when the backend runs ahead of the reader, and never lags more than the budget.
            self._deadline = now + self.budget
            if was_idle:
                self._next = now  # the first piece of new text goes out at once (no added TTFB)

    def due(self, now: float) -> list[bytes]:
        """What must go out at ``now`` (possibly nothing)."""
        out: list[bytes] = []
        while self._queue and not self._queue[0].paced:
            out.append(self._queue.popleft().data)
        if not self._queue or now < self._next:
            return out
        # When the backlog is so large that one piece per interval would miss the deadline, several
        # pieces go out together.
        left = max(self._deadline - now, 0.0)
        take = max(1, math.ceil(self._slots - left / self.interval - 1e-9))
        while self._queue and take:
            item = self._queue.popleft()
            out.append(item.data)
            if item.paced:
                self._slots -= 1
                take -= 1
        while self._queue and not self._queue[0].paced:
            out.append(self._queue.popleft().data)
        if self._slots:
            self._next = min(now + max(self.interval, (self._deadline - now) / self._slots), self._deadline)
        return out

    def wake_at(self) -> float | None:
        """When :meth:`due` next has something, or None when the queue is empty."""
        if not self._queue:
            return None
        return self._next if self._queue[0].paced else float("-inf")

    def flush(self) -> bytes:
        """Everything left, including a trailing partial event (the stream ends here)."""
        out = b"".join(item.data for item in self._queue) + self._splitter.pending
        self._queue.clear()
        self._slots = 0
        return out


def pacing_budget(header: str | None, default: bool | None, settings: PacingSettings) -> float | None:
    """The pacing budget in seconds for one request, or None for exact bytes.

    ``x-gateway-pacing: on | off | <milliseconds>`` decides; without it the principal's key or tier, then
    the pacing: section. Pacing only changes how the caller's own stream is timed, so any caller may ask.
    """
    if header is None:
        enabled = settings.enabled if default is None else default
        return settings.budget if enabled else None
    value = header.strip().lower()
    if value in ("off", "0", "false", "no"):
        return None
    if value in ("on", "true", "yes"):
        return settings.budget
    limit = int(settings.max_budget * 1000)
    # ASCII digits only: "²".isdigit() is true and int("²") raises (a header is read as Latin-1).
    digits = value.isascii() and value.isdigit() and len(value) <= len(str(limit))
    if not digits or not 1 <= int(value) <= limit:
        raise InvalidRequest(
            f"{PACING_HEADER} must be 'on', 'off' or a budget in milliseconds from 1 to {limit}.",
            code="invalid_header",
        )
    return int(value) / 1000


def split_event(event: bytes, max_pieces: int) -> list[bytes] | None:
    """The event as several smaller ones, or None when it is left as it is."""
    if not event.startswith(b"data:") or max_pieces < 2:
        return None
    data = event[5:].strip()
    if data == b"[DONE]" or not (b'"content"' in data or b'"reasoning' in data or b'"text"' in data):
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    choices = obj.get("choices") if isinstance(obj, dict) else None
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return None
    choice: dict[str, Any] = choices[0]
    delta = choice.get("delta")
    if isinstance(delta, dict):
        if delta.get("tool_calls"):
            return None
        fields = [(k, delta[k]) for k in _TEXT_KEYS if isinstance(delta.get(k), str) and delta[k]]
    elif isinstance(choice.get("text"), str) and choice["text"]:
        fields = [("text", choice["text"])]
    else:
        return None
    # One event's pieces, reasoning and content together, are at most max_pieces, shared by length.
    total = sum(len(value) for _, value in fields)
    texts = [
        (key, part)
        for key, value in fields
        for part in _pieces(value, max(1, round(max_pieces * len(value) / total)))
    ]
    if len(texts) < 2:
        return None
    events: list[bytes] = []
    last = len(texts) - 1
    for i, (key, part) in enumerate(texts):
        piece_choice = dict(choice)
        if isinstance(delta, dict):
            # The first piece keeps the delta's other fields (role); reasoning and content go separately.
            rest = {k: v for k, v in delta.items() if k not in _TEXT_KEYS} if i == 0 else {}
            piece_choice["delta"] = {**rest, key: part}
        else:
            piece_choice["text"] = part
        if i != last:
            piece_choice["finish_reason"] = None
        piece = {**obj, "choices": [piece_choice]}
        if i != last:
            piece.pop("usage", None)  # usage, when a chunk carries it, is counted once: on the last piece
        events.append(b"data: " + orjson.dumps(piece) + b"\n\n")
    return events


def _pieces(text: str, count: int) -> list[str]:
    """``text`` cut at word boundaries into at most ``count`` pieces of similar length."""
    words: list[str] = []
    for word in _WORD.findall(text):
        words.extend(word[i : i + _LONG_WORD] for i in range(0, len(word), _LONG_WORD))
    if len(words) <= count:
        return words
    pieces: list[str] = []
    size = len(words) / count
    for i in range(count):
        pieces.append("".join(words[round(i * size) : round((i + 1) * size)]))
    return [p for p in pieces if p]


async def pace(
    source: AsyncIterator[bytes],
    schedule: Schedule,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> AsyncIterator[bytes]:
    """``source`` re-timed by ``schedule``: the backend is read while queued pieces wait for their slot."""
    reading: asyncio.Future[bytes] | None = None
    ended = False
    try:
        while True:
            if reading is None and not ended:
                reading = asyncio.ensure_future(anext(source))
            wake = schedule.wake_at()
            if wake is None:
                if ended:
                    tail = schedule.flush()
                    if tail:
                        yield tail
                    return
                assert reading is not None
                await asyncio.wait((reading,))
            else:
                wait = wake - clock()
                if wait > 0:
                    if reading is not None:
                        await asyncio.wait((reading,), timeout=wait)
                    else:
                        await asyncio.sleep(wait)
            if reading is not None and reading.done():
                try:
                    schedule.arrive(reading.result(), clock())
                except StopAsyncIteration:
                    ended = True
                reading = None
            out = schedule.due(clock())
            if out:
                yield b"".join(out)
    finally:
        if reading is not None and not reading.done():
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await reading
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()
