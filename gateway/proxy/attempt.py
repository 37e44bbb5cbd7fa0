"""One attempt at one backend, ending in an :class:`Outcome` that the proxy loop acts on.

An attempt never retries by itself: it says whether another backend could do better (``retry``) and
whether the failure counts against this backend's circuit breaker. Nothing has reached the client when
an attempt returns, except through the stream it hands back; so a retry is only ever decided before the
first byte (docs/security.md: never retry once a byte went out).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.proxy.cost import RequestCost, charge_cut_short
from gateway.proxy.dialects import (
    MARKERS,
    Endpoint,
    answer_of_body,
    answer_of_events,
    inspect,
    stream_failure,
)
from gateway.proxy.dialects.base import json_or_none
from gateway.proxy.headers import client_response_headers
from gateway.proxy.outcome import Outcome, failed, from_status, raw_response
from gateway.proxy.pacing import PACING_HEADER, Schedule, pace
from gateway.proxy.quality import Answer, check_answer
from gateway.proxy.sse import EventSplitter
from gateway.proxy.thinking import strip_reasoning_body, strip_reasoning_event
from gateway.record import RequestRecord, Usage
from gateway.relay import RelayStreamResponse
from gateway.routing.settings import QualitySettings
from gateway.upstream import (
    UpstreamBroken,
    UpstreamClient,
    UpstreamError,
    UpstreamResponse,
)
from gateway.upstream.settings import BackendSettings

__all__ = ["CLIENT_CLOSED", "Attempt"]

# 499: nginx's code for "client closed request"; nobody receives it, the request log does.
CLIENT_CLOSED = 499
_SSE_HEADERS = [("cache-control", "no-cache"), ("x-accel-buffering", "no")]


@dataclass(slots=True)
class Attempt:
    """Everything one attempt needs; ``quality`` is set when the answer is checked before it goes out."""

    upstream: UpstreamClient
    backend: BackendSettings
    endpoint: Endpoint
    path: str
    body: bytes
    headers: list[tuple[str, str]]
    record: RequestRecord
    request_payload: dict[str, Any]
    quality: QualitySettings | None
    clock: Callable[[], float] = time.perf_counter
    strip_reasoning: bool = False
    pacing: Schedule | None = None
    # What the request may spend: what a stream cut short before its usage event is charged from.
    cost: RequestCost | None = None
    # When the backend was sent the request (for RequestRecord.backend_seconds), and the
    # attempt's trace span while its stream is relayed.
    _sent_at: float = field(default=0.0, init=False)
    _span: Any = field(default=None, init=False)

    # ---- usage and trace accounting around each attempt -------------------------------------

    def _begin(self) -> tuple[Any, list[tuple[str, str]]]:
        """The attempt's span (None with tracing off) and the headers to send, with its traceparent."""
        self._sent_at = self.clock()
        trace = self.record.trace
        if trace is None:
            return None, self.headers
        span = trace.attempt(self.backend)
        return span, span.headers(self.headers)

    def _end(self, span: Any, outcome: Outcome | None) -> None:
        self.record.backend_seconds += self.clock() - self._sent_at
        if span is not None:
            span.end(_span_outcome(outcome))

    # ---- non-streaming ----------------------------------------------------------------------------------

    async def unary(self) -> Outcome:
        span, headers = self._begin()
        outcome: Outcome | None = None
        try:
            outcome = await self._unary(headers)
            return outcome
        finally:
            self._end(span, outcome)

    async def _unary(self, headers: list[tuple[str, str]]) -> Outcome:
        try:
            response = await self.upstream.send(
                self.backend, self.path, body=self.body, headers=headers, stream=False
            )
            try:
                data = await response.read()
            finally:
                await response.aclose()
        except UpstreamError as exc:
            return failed(exc, self.backend)
        if response.status != 200:
            return from_status(response.status, data, self.backend)
        if _encoded(response.headers):
            return failed(UpstreamBroken("encoded answer"), self.backend)
        body = json_or_none(data)
        self.record.usage = Usage.from_json(body.get("usage")) if isinstance(body, dict) else None
        if self.strip_reasoning:
            data = strip_reasoning_body(data)
        if self.record.content is not None or self.record.shadow is not None:
            text = answer_of_body(body, self.endpoint).content
            if self.record.content is not None:
                self.record.content["completion"] = text
            if self.record.shadow is not None:  # what a shadow sample compares (gateway/shadow/)
                self.record.answer = text
        ok = Outcome(response=raw_response(data, response.status, client_response_headers(response.headers)))
        if self.quality is not None:
            rough = check_answer(answer_of_body(body, self.endpoint), self.request_payload, self.quality)
            if rough is not None:
                # Kept in the outcome: with no backend left to retry on, the answer goes out as it is.
                ok.retry = f"quality:{rough}"
        return ok

    # ---- streaming ---------------------------------------------------------------------------------------

    async def open_stream(self) -> tuple[Outcome, UpstreamResponse | None, list[bytes]]:
        """Open the stream and hold its first chunk (more, when the answer is to be checked first).

        Until something is sent, a failure can still be a clean HTTP error or a switch to another backend.
        """
        span, headers = self._begin()
        opened: tuple[Outcome, UpstreamResponse | None, list[bytes]] | None = None
        try:
            opened = await self._open_stream(headers)
            return opened
        finally:
            if opened is not None and opened[1] is not None:
                self._span = span  # the relay ends it, with the stream
            else:
                self._end(span, opened[0] if opened is not None else None)

    async def _open_stream(
        self, headers: list[tuple[str, str]]
    ) -> tuple[Outcome, UpstreamResponse | None, list[bytes]]:
        try:
            response = await self.upstream.send(
                self.backend, self.path, body=self.body, headers=headers, stream=True
            )
        except UpstreamError as exc:
            return failed(exc, self.backend), None, []
        try:
            if response.status != 200:
                data = await response.read()
                await response.aclose()
                return from_status(response.status, data, self.backend), None, []
            if _encoded(response.headers):
                await response.aclose()
                return failed(UpstreamBroken("encoded answer"), self.backend), None, []
            held, answer = await self._hold(response)
        except UpstreamError as exc:
            await response.aclose()
            return failed(exc, self.backend), None, []
        except BaseException:
            await response.aclose()
            raise
        if not held:
            await response.aclose()
            return failed(UpstreamBroken("empty stream"), self.backend), None, []
        if self.quality is not None and answer is not None:
            rough = check_answer(answer, self.request_payload, self.quality)
            if rough is not None:
                # Nothing went out yet: the stream is abandoned and the request runs elsewhere.
                await response.aclose()
                return Outcome(retry=f"quality:{rough}", outcome="ok"), None, []
        return Outcome(), response, held

    async def _hold(self, response: UpstreamResponse) -> tuple[list[bytes], Answer | None]:
        """The first chunk, or as many as the quality check needs, and the answer they hold when checked
        (parsed once: the check reads the same answer the hold stopped on)."""
        first = await response.next_chunk()
        held = [first] if first else []
        if self.quality is None or not held:
            return held, None
        # The diffusion backend sends a whole canvas per chunk: hold until there is visible text to check
        # or the answer ended (the whole answer, when tools are offered: the call comes in the last canvas).
        wait_for_end = bool(self.request_payload.get("tools"))

        def checkable(answer: Answer) -> bool:
            return _checkable(answer, wait_for_end)

        answer = answer_of_events(held, self.endpoint, until=checkable)
        while not checkable(answer):
            chunk = await response.next_chunk()
            if chunk is None:
                break
            held.append(chunk)
            answer = answer_of_events(held, self.endpoint, until=checkable)
        return held, answer

    def stream_response(
        self,
        response: UpstreamResponse,
        held: list[bytes],
        client_wants_usage: bool,
        on_end: Callable[[bool], None],
    ) -> RelayStreamResponse:
        headers = [
            (k, v) for k, v in client_response_headers(response.headers) if k.lower() != "cache-control"
        ]
        body = self._relay(response, held, client_wants_usage)
        if self.pacing is not None:
            body = pace(body, self.pacing)
            self.record.pacing = self.pacing.budget
            headers.append((PACING_HEADER, str(round(self.pacing.budget * 1000))))
        record, cost = self.record, self.cost

        def ended(disconnected: bool) -> None:
            if disconnected:
                # 499 disconnected, as a non-streamed request is.
                record.outcome = "disconnected"
                record.status = CLIENT_CLOSED
            if disconnected or record.usage is None:
                # Without the backend's count (a client gone, a stream broken off or without usage) the
                # stream is charged its prompt and what it relayed, never nothing.
                charge_cut_short(record, cost)
            on_end(disconnected)

        return RelayStreamResponse(body, status=200, headers=headers + _SSE_HEADERS, on_end=ended)

    async def _relay(
        self, response: UpstreamResponse, held: list[bytes], client_wants_usage: bool
    ) -> AsyncIterator[bytes]:
        record = self.record
        splitter = EventSplitter()
        pending = list(held)
        done = False
        # What went out, kept to read the answer from at the end: for the request log's content, and for
        # a shadow sample (gateway/shadow/), which compares it.
        sent: list[bytes] | None = [] if record.content is not None or record.shadow is not None else None
        # Events are split and looked at one by one only when something in them matters: a marker of
        # the end, usage or an error, reasoning to strip, content to log. The rest of a stream (most of
        # it) passes as the bytes it came in.
        markers = MARKERS[self.endpoint] if not self.strip_reasoning and sent is None else None
        try:
            while not done:
                chunk = pending.pop(0) if pending else await response.next_chunk()
                if chunk is None:
                    # The backend closed the stream without [DONE]: say so instead of a silent truncation.
                    raise UpstreamBroken("stream ended early")
                out: list[bytes] = []
                if markers is not None:
                    block, events = splitter.split(chunk, markers)
                    if block:
                        out.append(block)
                else:
                    events = splitter.feed(chunk)
                for event in events:
                    info = inspect(event, self.endpoint)
                    if info.done:
                        done = True
                    if info.error is not None:
                        record.outcome = "upstream_broken"
                        record.error_code = "backend_stream_error"
                    elif info.usage is not None:
                        record.usage = info.usage.merged(record.usage) if record.usage else info.usage
                        if info.usage_only and not client_wants_usage:
                            continue
                    if self.strip_reasoning:
                        event = strip_reasoning_event(event)
                    out.append(event)
                if out:
                    if record.ttfb is None:
                        record.ttfb = self.clock() - record.started
                    if sent is not None:
                        sent.extend(out)
                    data = b"".join(out)
                    record.relayed_events += data.count(b"data:")  # one C scan: what a hang-up is charged
                    yield data
        except UpstreamError as exc:
            record.outcome = f"upstream_{exc.kind}"
            record.error_code = "backend_stream_interrupted"
            record.upstream_errors.append((self.backend.name, "stream_interrupted"))
            yield stream_failure(
                self.endpoint,
                "The backend failed while streaming the answer; the answer is incomplete.",
                "backend_stream_interrupted",
            )
        finally:
            await response.aclose(answered=done)
            self._end(self._span, Outcome(outcome=record.outcome or "ok"))
            if sent is not None:
                text = answer_of_events(sent, self.endpoint).content
                if record.content is not None:
                    record.content["completion"] = text
                if record.shadow is not None:
                    record.answer = text


def _span_outcome(outcome: Outcome | None) -> str:
    """What an attempt's span reports: why another backend was tried, else the outcome."""
    if outcome is None:
        return "cancelled"
    return outcome.retry or outcome.outcome


def _checkable(answer: Answer, wait_for_end: bool) -> bool:
    if answer.finished:
        return True
    return not wait_for_end and bool(answer.content or answer.reasoning or answer.tool_calls)


def _encoded(headers: list[tuple[str, str]]) -> bool:
    """An answer with a content coding: the gateway asks for none and relays bytes as they are, so one it
    cannot pass on unchanged is a broken answer, not a corrupted one for the client."""
    return any(
        k.lower() == "content-encoding" and v.strip().lower() not in ("", "identity") for k, v in headers
    )
