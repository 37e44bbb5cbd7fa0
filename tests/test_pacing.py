"""Stream pacing: canvases re-chunked into small deltas, the same text and tool calls, within the budget."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from gateway.config import PacingSettings
from gateway.errors import InvalidRequest
from gateway.proxy.pacing import Schedule, pace, pacing_budget, split_event
from gateway.proxy.sse import EventSplitter
from tests.support import AR_MODEL, DIFFUSION_MODEL, wait_for, write_key

LOREM = (
    "Diffusion models write a whole block of text at once and then refine it over several steps, "
    "so the answer arrives in bursts rather than one token at a time. "
)


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> bytes:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}
    obj = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice], **extra}
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def canvas_stream(canvases: int) -> list[bytes]:
    """What a diffusion backend sends: one chunk per canvas, then finish, usage and [DONE]."""
    chunks = [chunk({"role": "assistant", "reasoning": "Let me think. " * 20, "content": LOREM * 3})]
    chunks += [chunk({"content": LOREM * 4}) for _ in range(canvases - 1)]
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
    chunks.append(chunk({"tool_calls": [call]}))
    chunks.append(chunk({"content": ""}, finish="tool_calls"))
    chunks.append(b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":900}}\n\n')
    chunks.append(b": keep-alive\n\n")
    chunks.append(b"data: [DONE]\n\n")
    return chunks


def answer(data: bytes) -> dict[str, Any]:
    """The text, reasoning, tool calls and finish reasons a client reassembles from SSE bytes."""
    out: dict[str, Any] = {"content": "", "reasoning": "", "tool_calls": [], "finish": [], "usage": []}
    for event in EventSplitter().feed(data):
        if not event.startswith(b"data:") or event.strip() == b"data: [DONE]":
            continue
        obj = orjson.loads(event[5:])
        if "usage" in obj:
            out["usage"].append(obj["usage"])
        for choice in obj["choices"]:
            delta = choice.get("delta", {})
            out["content"] += delta.get("content") or choice.get("text") or ""
            out["reasoning"] += delta.get("reasoning") or ""
            out["tool_calls"] += delta.get("tool_calls") or []
            if choice.get("finish_reason"):
                out["finish"].append(choice["finish_reason"])
    return out


def simulate(schedule: Schedule, arrivals: list[tuple[float, bytes]]) -> list[tuple[float, bytes]]:
    """Drive a schedule on a virtual clock: what goes out, and when."""
    sent: list[tuple[float, bytes]] = []
    pending = sorted(arrivals, key=lambda a: a[0])
    now = 0.0
    while pending or schedule.wake_at() is not None:
        wake = schedule.wake_at()
        next_arrival = pending[0][0] if pending else float("inf")
        if wake is not None and wake <= next_arrival:
            now = max(now, wake)
        else:
            now = next_arrival
            schedule.arrive(pending.pop(0)[1], now)
        for data in schedule.due(now):
            sent.append((now, data))
    return sent


@pytest.mark.parametrize("canvases", [1, 3, 8])
@pytest.mark.parametrize(("budget", "gap"), [(1.0, 0.2), (1.0, 1.6), (0.3, 0.05), (2.0, 0.0)])
def test_schedule_same_answer_within_budget(canvases, budget, gap):
    chunks = canvas_stream(canvases)
    arrivals = [(0.5 + gap * min(i, canvases - 1), c) for i, c in enumerate(chunks)]
    sent = simulate(Schedule(budget, 0.04), arrivals)
    paced = b"".join(data for _, data in sent)
    assert answer(paced) == answer(b"".join(chunks))
    # Every event after the last text chunk keeps its bytes, in order.
    assert paced.endswith(b"".join(chunks[canvases:]))
    # Smaller deltas: many more events than canvases.
    assert paced.count(b"data: ") >= len(chunks) + 5 * canvases
    # The first piece leaves when the first canvas arrives: no added time to first byte.
    assert sent[0][0] == arrivals[0][0]
    # The end of the answer is delayed by at most the budget.
    end_upstream = arrivals[-1][0]
    end_paced = max(t for t, data in sent if b"[DONE]" in data)
    assert end_paced <= end_upstream + budget + 1e-9


def test_schedule_spreads_a_single_canvas_over_the_budget():
    sent = simulate(Schedule(1.0, 0.05), [(0.0, chunk({"content": LOREM * 4})), (0.0, b"data: [DONE]\n\n")])
    times = [t for t, data in sent if b"content" in data]
    assert len(times) == 20  # budget / interval pieces
    assert times[0] == 0.0 and 0.9 <= times[-1] <= 1.0
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert max(gaps) - min(gaps) < 1e-6  # evenly


def test_split_event_leaves_what_it_must():
    call = {"index": 0, "function": {"name": "f", "arguments": '{"a": 1}'}}
    assert split_event(chunk({"tool_calls": [call], "content": "x y z"}), 10) is None
    assert split_event(b"data: [DONE]\n\n", 10) is None
    assert split_event(b": keep-alive\n\n", 10) is None
    assert split_event(chunk({"content": "one"}), 10) is None  # a single word: nothing to split
    two = orjson.dumps({"choices": [{"delta": {"content": "a b c"}}, {"delta": {"content": "d e"}}]})
    assert split_event(b"data: " + two + b"\n\n", 10) is None  # n > 1


def test_split_event_pieces():
    event = chunk({"role": "assistant", "content": "one two three four"}, finish="stop", usage={"x": 1})
    pieces = [orjson.loads(p[6:]) for p in split_event(event, 10) or []]
    assert [p["choices"][0]["delta"].get("content") for p in pieces] == ["one ", "two ", "three ", "four"]
    assert pieces[0]["choices"][0]["delta"]["role"] == "assistant"
    assert all("role" not in p["choices"][0]["delta"] for p in pieces[1:])
    assert [p["choices"][0]["finish_reason"] for p in pieces] == [None, None, None, "stop"]
    assert ["usage" in p for p in pieces] == [False, False, False, True]
    # Completions' text, and a long word without spaces cut by characters; never more than asked.
    text = orjson.dumps({"choices": [{"index": 0, "text": "x" * 100, "finish_reason": None}]})
    pieces = split_event(b"data: " + text + b"\n\n", 3) or []
    parts = [orjson.loads(p[6:])["choices"][0]["text"] for p in pieces]
    assert "".join(parts) == "x" * 100 and len(parts) == 3
    assert (
        "".join(
            orjson.loads(p[6:])["choices"][0]["delta"]["content"]
            for p in split_event(chunk({"content": LOREM * 5}), 7) or []
        )
        == LOREM * 5
    )


def test_pacing_budget_sources():
    settings = PacingSettings(budget=1.5, max_budget=4)
    assert pacing_budget(None, None, settings) is None  # off by default
    assert pacing_budget(None, True, settings) == 1.5  # the key or tier
    assert pacing_budget(None, None, PacingSettings(enabled=True)) == 1.0  # globally
    assert pacing_budget("off", True, settings) is None  # the request decides
    assert pacing_budget("on", False, settings) == 1.5
    assert pacing_budget("750", None, settings) == 0.75
    # "²" and "٣": digits to str.isdigit, and int() refuses the first and reads the second (a 500 and a
    # budget from a non-ASCII header); "0" * 9 + "1": a number in range, in more digits than it needs.
    for bad in ("fast", "0.5", "-1", "4001", "", "\u00b2", "\u0663", "1_0", "+7", "0" * 9 + "1"):
        with pytest.raises(InvalidRequest):
            pacing_budget(bad, None, settings)
    with pytest.raises(ValueError):
        PacingSettings(budget=10, max_budget=5)


async def test_pace_driver_reads_while_pieces_wait():
    chunks = canvas_stream(3)
    reads: list[int] = []

    async def source() -> AsyncIterator[bytes]:
        for i, c in enumerate(chunks):
            reads.append(i)
            yield c

    out = b"".join([part async for part in pace(source(), Schedule(0.05, 0.005))])
    assert answer(out) == answer(b"".join(chunks))
    assert out.endswith(b"data: [DONE]\n\n") and reads == list(range(len(chunks)))


async def test_pace_driver_closes_its_source():
    closed = asyncio.Event()

    async def source() -> AsyncIterator[bytes]:
        try:
            yield chunk({"content": LOREM})
            await asyncio.Event().wait()  # a backend that goes quiet
            yield b""
        finally:
            closed.set()

    paced = pace(source(), Schedule(0.05, 0.005))
    first = await anext(paced)
    assert b"content" in first
    await paced.aclose()  # the client went away mid-answer
    assert closed.is_set()


# ---- end to end, through the gateway and the simulated backends -------------------------------------------

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def stream(gw: Any, key: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    with httpx.stream(
        "POST",
        gw.base_url + "/chat/completions",
        json={**body, "stream": True},
        headers={"authorization": f"Bearer {key}", **headers},
        timeout=30,
    ) as response:
        response.read()
    return response


def long_chat(seed: str) -> dict[str, Any]:
    return {
        "model": DIFFUSION_MODEL,
        "messages": [{"role": "user", "content": f"Tell me a long story about {seed}."}],
        "max_tokens": 700,
    }


def test_paced_stream_has_the_same_text_and_tool_calls(make_gateway, caplog):
    caplog.set_level(logging.INFO, logger="gateway.request")
    gw = make_gateway()
    for body in (long_chat("rivers"), {**long_chat("tools"), "tools": [TOOL]}):
        plain = stream(gw, gw.key, body)
        paced = stream(gw, gw.key, body, **{"x-gateway-pacing": "200"})
        assert plain.status_code == paced.status_code == 200
        assert "x-gateway-pacing" not in plain.headers  # off by default: exact bytes
        assert paced.headers["x-gateway-pacing"] == "200"
        assert answer(paced.content) == answer(plain.content)
        if "tools" in body:
            assert answer(paced.content)["tool_calls"]  # the answer is a call: passed through whole
        else:
            assert paced.content.count(b"data: ") > 2 * plain.content.count(b"data: ")

    # The request log says which answers were paced, and over what budget.
    def paced() -> list[object]:
        return [
            getattr(r, "fields", {}).get("pacing_ms") for r in caplog.records if r.name == "gateway.request"
        ]

    assert wait_for(lambda: paced().count(200) == 2)


def test_pacing_per_key_globally_and_never_on_token_streams(make_gateway):
    gw = make_gateway(pacing={"enabled": True, "budget": 0.2})
    body = long_chat("mountains")
    assert stream(gw, gw.key, body).headers["x-gateway-pacing"] == "200"  # global default
    assert "x-gateway-pacing" not in stream(gw, gw.key, body, **{"x-gateway-pacing": "off"}).headers
    quiet = write_key(gw.keys_file, "quiet", pacing=False)
    assert wait_for(lambda: stream(gw, quiet, body).status_code == 200)
    assert "x-gateway-pacing" not in stream(gw, quiet, body).headers  # the key says no
    # An autoregressive stream is already token by token: its bytes are never touched.
    ar = stream(gw, gw.key, {**body, "model": AR_MODEL})
    assert ar.status_code == 200 and "x-gateway-pacing" not in ar.headers
    bad = httpx.post(
        gw.base_url + "/chat/completions",
        json={**body, "stream": True},
        headers={"authorization": f"Bearer {gw.key}", "x-gateway-pacing": "soon"},
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_header"
