"""Header handling, request parsing and SSE inspection, as pure functions."""

from __future__ import annotations

import random
from collections.abc import Iterator

import orjson
import pytest

from gateway.errors import InvalidRequest
from gateway.proxy.body import parse_request, upstream_body
from gateway.proxy.dialects import MARKERS, answer_of_events
from gateway.proxy.headers import client_request_id, client_response_headers, upstream_request_headers
from gateway.proxy.sse import EventSplitter, events_of, inspect_event
from gateway.upstream.settings import BackendSettings

BACKEND = BackendSettings(
    name="d", kind="diffusion", url="http://10.0.0.5:8000", model="m", api_key="backend-secret"
)


def test_request_headers_drop_hop_by_hop_credentials_and_connection_named():
    client = [
        ("Authorization", "Bearer gw-client"),
        ("x-api-key", "gw-client"),
        ("Connection", "keep-alive, X-Private-Hop"),
        ("X-Private-Hop", "1"),
        ("Keep-Alive", "timeout=5"),
        ("TE", "trailers"),
        ("Transfer-Encoding", "chunked"),
        ("Upgrade", "h2c"),
        ("Proxy-Authorization", "Basic x"),
        ("Host", "gateway.example"),
        ("Content-Length", "10"),
        ("Cookie", "session=1"),
        ("x-gateway-route", "quality"),
        ("x-forwarded-for", "1.2.3.4"),
        ("User-Agent", "OpenAI/Python"),
        ("Content-Type", "application/json; charset=utf-8"),
        ("x-request-id", "spoofed"),
    ]
    out = upstream_request_headers(client, BACKEND, "rid-1")
    names = [k.lower() for k, _ in out]
    assert ("user-agent", "OpenAI/Python") in [(k.lower(), v) for k, v in out]
    for dropped in (
        "connection",
        "x-private-hop",
        "keep-alive",
        "te",
        "transfer-encoding",
        "upgrade",
        "proxy-authorization",
        "host",
        "content-length",
        "cookie",
        "x-gateway-route",
        "x-api-key",
        "x-forwarded-for",
    ):
        assert dropped not in names
    assert dict(out)["authorization"] == "Bearer backend-secret"
    assert names.count("authorization") == 1 and names.count("content-type") == 1
    assert ("content-type", "application/json") in out  # the body is the gateway's own JSON
    assert dict(out)["x-request-id"] == "rid-1"


def test_no_backend_key_means_no_authorization_upstream():
    backend = BACKEND.model_copy(update={"api_key": None})
    out = upstream_request_headers([("authorization", "Bearer gw-client")], backend, "r")
    assert "authorization" not in [k for k, _ in out]


def test_response_headers_pass_by_allowlist():
    upstream = [
        ("Content-Type", "text/event-stream"),
        ("content-length", "5"),
        ("transfer-encoding", "chunked"),
        ("connection", "close,x-hop"),
        ("x-hop", "1"),
        ("server", "uvicorn"),
        ("X-Request-ID", "backend-id"),  # the gateway sends its own request id
        ("x-gateway-backend", "spoofed"),  # the gateway's own headers are never a backend's
        ("x-ratelimit-remaining-requests", "999"),
        ("set-cookie", "a=b"),
        ("x-vllm-thing", "ok"),
        ("content-type", "application/json"),  # a second one: the first stands
    ]
    assert client_response_headers(upstream) == [("content-type", "text/event-stream")]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("abc-123", True),
        ("a", True),
        ("a" * 128, True),
        ("{trace 7}", True),  # printable ASCII, spaces included
        ("a" * 129, False),
        ("x\ty", False),
        ("x\ny", False),
        ("é", False),
        ("", False),
        (None, False),
    ],
)
def test_a_client_request_id_is_kept_only_when_short_and_printable(value, ok):
    assert client_request_id(value) == (value if ok else None)


def parse(body: bytes | str, endpoint="chat", **kw):
    data = body.encode() if isinstance(body, str) else body
    return parse_request(data, endpoint, max_n=kw.get("max_n", 8), max_output_tokens=kw.get("max_out"))


@pytest.mark.parametrize(
    ("body", "code", "param"),
    [
        ("{not json", "invalid_json", None),
        (b'{"model": "\xff\xfe"}', "invalid_encoding", None),
        ("[1, 2]", "invalid_json", None),
        ('"text"', "invalid_json", None),
        ('{"model": "auto"}', "missing_required_parameter", "messages"),
        ('{"messages": [{"role": "user", "content": "x"}]}', "missing_required_parameter", "model"),
        ('{"model": 5, "messages": [{"role": "user"}]}', "invalid_type", "model"),
        ('{"model": "auto", "messages": []}', "invalid_type", "messages"),
        ('{"model": "auto", "messages": "hi"}', "invalid_type", "messages"),
        ('{"model": "auto", "messages": [{}], "stream": "yes"}', "invalid_type", "stream"),
        ('{"model": "auto", "messages": [{}], "n": 50}', "invalid_value", "n"),
    ],
)
def test_bad_bodies_are_400_with_a_code(body, code, param):
    with pytest.raises(InvalidRequest) as info:
        parse(body)
    assert info.value.status == 400 and info.value.code == code and info.value.param == param


def test_completions_need_a_prompt_and_max_tokens_can_be_bounded():
    with pytest.raises(InvalidRequest):
        parse('{"model": "auto"}', "completions")
    assert parse('{"model": "auto", "prompt": "x"}', "completions").endpoint == "completions"
    with pytest.raises(InvalidRequest) as info:
        parse('{"model": "auto", "messages": [{}], "max_tokens": 5000}', max_out=4096)
    assert info.value.param == "max_tokens"


def test_upstream_body_rewrites_model_and_always_asks_for_usage():
    req = parse(
        '{"model": "auto", "messages": [{}], "stream": true,'
        ' "stream_options": {"continuous_usage_stats": true},'
        ' "vllm_xargs": {"diffusion_max_steps": 8}, "unknown": {"deep": [1]}}'
    )
    assert not req.client_wants_usage
    body = orjson.loads(upstream_body(req, "backend-model"))
    assert body["model"] == "backend-model"
    assert body["stream_options"] == {"continuous_usage_stats": True, "include_usage": True}
    assert body["vllm_xargs"] == {"diffusion_max_steps": 8} and body["unknown"] == {"deep": [1]}
    plain = parse('{"model": "auto", "messages": [{}]}')
    assert "stream_options" not in orjson.loads(upstream_body(plain, "m"))
    assert parse(
        '{"model": "a", "messages": [{}], "stream": true, "stream_options": {"include_usage": true}}'
    ).client_wants_usage


def test_event_splitter_handles_events_split_across_reads():
    s = EventSplitter()
    assert s.feed(b'data: {"a"') == []
    assert s.feed(b": 1}\n\ndata: [DO") == [b'data: {"a": 1}\n\n']
    assert s.feed(b"NE]\n\n: keep-alive\r\n\r\n") == [b"data: [DONE]\n\n", b": keep-alive\r\n\r\n"]
    assert s.pending == b""


@pytest.mark.parametrize("seed", range(20))
def test_plain_runs_pass_whole_and_every_event_that_matters_is_still_seen(seed):
    """The relay's fast path: the events before the first marker go out as one block; whatever the
    chunking, the bytes are the stream's, in order, and each [DONE], usage or error event is split out."""
    rng = random.Random(seed)
    events = [b'data: {"choices":[{"delta":{"content":"t%d"}}]}\n\n' % i for i in range(40)]
    events.insert(rng.randrange(40), b": keep-alive\r\n\r\n")
    events += [b'data: {"choices":[],"usage":{"prompt_tokens":1}}\n\n', b"data: [DONE]\n\n"]
    stream = b"".join(events)
    cuts = sorted(rng.sample(range(1, len(stream)), 12))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    splitter, out, seen = EventSplitter(), [], []
    for chunk in chunks:
        block, split = splitter.split(chunk, MARKERS["chat"])
        assert not any(m in block for m in MARKERS["chat"])
        seen += [e for e in split if inspect_event(e).done or inspect_event(e).usage]
        out += [block, *split]
    assert b"".join(out) == stream and splitter.pending == b""
    assert seen == events[-2:]


def test_events_of_splits_as_the_splitter_does_and_only_as_far_as_it_is_read():
    data = b'data: {"a": 1}\n\n: keep-alive\r\n\r\ndata: [DONE]\n\ndata: {"incomp'
    assert list(events_of(data)) == EventSplitter().feed(data)
    assert list(events_of(b"")) == [] and list(events_of(b"no terminator")) == []
    # Lazy: a read holding a whole stream is split one event at a time, so a reader that stops at the
    # first event it needs (the quality check's hold) leaves the rest unsplit.
    events = events_of(b'data: {"a": 1}\n\n' * 1000)
    assert isinstance(events, Iterator) and next(events) == b'data: {"a": 1}\n\n'


def test_the_held_answer_is_the_same_whatever_the_reader_stops_at():
    chunks = [b'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n' * 3, b"data: [DONE]\n\n"]
    first = answer_of_events(chunks, "chat", until=lambda answer: bool(answer.content))
    assert first.content == "Hi" and not first.finished
    whole = answer_of_events(chunks, "chat")
    assert whole.content == "HiHiHi" and whole.finished


def test_event_splitter_with_no_terminator_in_a_long_read_keeps_it_all():
    s = EventSplitter()
    assert s.feed(b"data: " + b"x" * 100_000) == [] and len(s.pending) == 100_006
    assert s.split(b"y", MARKERS["chat"]) == (b"", []) and len(s.pending) == 100_007
    assert s.split(b"\n\ndata: [DONE]\n\n", MARKERS["chat"]) == (
        b"data: " + b"x" * 100_000 + b"y\n\n",
        [b"data: [DONE]\n\n"],
    )


def test_inspect_event():
    assert inspect_event(b"data: [DONE]\n\n").done
    assert inspect_event(b": keep-alive\n\n").usage is None
    usage = (
        b'data: {"id":"x","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,'
        b'"completion_tokens_details":{"reasoning_tokens":2}}}\n\n'
    )
    info = inspect_event(usage)
    assert info.usage_only and info.usage is not None
    assert (info.usage.prompt_tokens, info.usage.completion_tokens, info.usage.reasoning_tokens) == (3, 5, 2)
    continuous = inspect_event(b'data: {"choices":[{"delta":{}}],"usage":{"prompt_tokens":1}}\n\n')
    assert continuous.usage is not None and not continuous.usage_only
    assert inspect_event(b'data: {"error": {"message": "x"}}\n\n').error == {"message": "x"}
    assert (
        inspect_event(b'data: {"choices":[{"delta":{"content":"the \\"usage\\" word"}}]}\n\n').usage is None
    )


def test_the_answer_to_check_is_parsed_only_as_far_as_the_check_needs():
    """A held read can be a whole stream of small events; the hold parses until there is text to check."""
    from gateway.proxy.dialects import answer_of_events

    def delta(**d: object) -> bytes:
        return b"data: " + orjson.dumps({"choices": [{"index": 0, "delta": d}]}) + b"\n\n"

    call = {"index": 0, "function": {"name": "f", "arguments": "{}"}}
    held = [delta(role="assistant") + delta(content="first") + delta(content=" second")]
    held.append(delta(tool_calls=[call]) + b"data: [DONE]\n\n")
    whole = answer_of_events(held, "chat")
    assert (whole.content, whole.tool_calls, whole.finished) == ("first second", [("f", "{}")], True)
    some = answer_of_events(held, "chat", until=lambda a: bool(a.content))
    assert (some.content, some.tool_calls, some.finished) == ("first", [], False)
    called = answer_of_events(held, "chat", until=lambda a: bool(a.tool_calls))
    assert called.tool_calls == [("f", "{}")] and not called.finished
