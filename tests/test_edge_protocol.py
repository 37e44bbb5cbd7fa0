"""The edge protocol (gateway/edge/protocol.py) starts the app once a request's body is in and hands it the
body whole: uvicorn's own protocol starts the app at the headers and wakes it for every piece of body that
arrives, which a client sending a byte at a time, or never finishing, turns into a task per connection and
a task step per byte. Bytes are fed to the protocol on a real event loop through a recording transport;
no sockets."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry
from pydantic import ValidationError
from starlette.types import Receive, Scope, Send
from uvicorn.config import Config
from uvicorn.server import ServerState

from gateway.edge.protocol import EdgeProtocol
from gateway.edge.settings import EdgeSettings
from gateway.edge.state import EdgeState
from gateway.telemetry.metrics import Metrics
from tests.conftest import sample_sum
from tests.support import FakeLoop


class Recorder(asyncio.Transport):
    """Just enough of a socket transport for uvicorn's protocol."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False
        self.reading = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000)}.get(name, default)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


class BodyRecorder:
    """An app behind the edge that reads the body and answers with how many messages it took."""

    def __init__(self, settings: EdgeSettings | None = None, cap: int = 100) -> None:
        self.registry = CollectorRegistry()
        self.edge = EdgeState(settings or EdgeSettings(), cap, Metrics(self.registry, ["b"]), self)
        self.messages: list[tuple[int, bool]] = []
        self.started = 0
        self.headers: list[list[tuple[bytes, bytes]]] = []  # each request's, as the app saw them

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        self.started += 1
        self.headers.append(list(scope["headers"]))
        total = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.messages.append((-1, False))
                return
            self.messages.append((len(message["body"]), message["more_body"]))
            total += len(message["body"])
            if not message["more_body"]:
                break
        body = str(total).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-length", b"%d" % len(body))],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _let_run(turns: int = 20) -> None:
    """Let the app's task run for a few turns of the event loop, as it would between two reads."""
    for _ in range(turns):
        await asyncio.sleep(0)


async def _serve(
    app: BodyRecorder, pieces: list[bytes], clock: FakeLoop | None = None, transport: Recorder | None = None
) -> tuple[Recorder, EdgeProtocol]:
    """A connection fed ``pieces``; with a ``clock``, its request deadlines run on that clock alone."""
    config = Config(app, http=EdgeProtocol, log_config=None, lifespan="off")
    config.load()
    if clock is not None:
        # The edge's one timer per loop, built by the edge itself (its tick included) on the test's clock.
        timer = app.edge.deadlines(clock)  # type: ignore[arg-type]
        app.edge.deadlines = lambda loop: timer  # type: ignore[method-assign]
    protocol = EdgeProtocol(config, ServerState(), {})
    transport = transport or Recorder()
    protocol.connection_made(transport)
    for piece in pieces:
        protocol.data_received(piece)
        await _let_run(5)
    await _let_run()
    return transport, protocol


def _head(length: int) -> bytes:
    return b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % length


def test_a_body_sent_a_byte_at_a_time_reaches_the_app_in_one_message() -> None:
    app = BodyRecorder()
    body = b'{"model": "auto"}'
    transport, _ = asyncio.run(_serve(app, [_head(len(body)), *(bytes([b]) for b in body)]))
    assert app.messages == [(len(body), False)]
    assert transport.written.endswith(b"\r\n\r\n%d" % len(body))
    assert not transport.closed


def test_a_body_past_the_high_water_mark_comes_in_parts_and_reading_resumes() -> None:
    app = BodyRecorder()
    body = b"x" * 200_000
    pieces = [_head(len(body))] + [body[i : i + 50_000] for i in range(0, len(body), 50_000)]
    transport, _ = asyncio.run(_serve(app, pieces))
    assert sum(size for size, _ in app.messages) == len(body)
    assert len(app.messages) > 1 and app.messages[-1][1] is False
    assert transport.reading  # paused while the buffer was full, resumed as the app drained it
    assert transport.written.endswith(b"\r\n\r\n%d" % len(body))


def test_the_app_starts_only_once_the_body_is_in() -> None:
    app = BodyRecorder()

    async def run() -> None:
        transport, protocol = await _serve(app, [_head(20), b"0123456789"])
        assert app.started == 0  # half the body: no task, no middleware, no authentication yet
        protocol.data_received(b"abcdefghij")
        await _let_run()
        assert app.started == 1
        assert transport.written.endswith(b"\r\n\r\n20")

    asyncio.run(run())
    assert app.messages == [(20, False)]


def test_a_client_that_leaves_mid_body_never_reaches_the_app() -> None:
    app = BodyRecorder()

    async def run() -> None:
        transport, protocol = await _serve(app, [_head(100), b"0123456789"])
        protocol.connection_lost(None)
        await _let_run()
        assert transport.written == b""

    asyncio.run(run())
    assert app.started == 0 and app.messages == []


def test_a_body_whose_deadline_passes_gets_408_and_never_reaches_the_app() -> None:
    app = BodyRecorder()

    async def run() -> None:
        transport, protocol = await _serve(app, [_head(100), b"0123456789"])
        protocol.deadline_passed()  # as the edge's timer calls it
        await _let_run()
        assert transport.written.startswith(b"HTTP/1.1 408 ") and transport.closed

    asyncio.run(run())
    assert app.started == 0


def test_expect_100_continue_starts_the_app_at_the_head() -> None:
    """Such a client sends its body only after the 100, which uvicorn writes when the app first reads."""
    app = BodyRecorder()
    head = b"POST /x HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"

    async def run() -> None:
        transport, protocol = await _serve(app, [head])
        assert app.started == 1
        assert transport.written == b"HTTP/1.1 100 Continue\r\n\r\n"
        protocol.data_received(b"hello")
        await _let_run()
        assert transport.written.endswith(b"\r\n\r\n5")

    asyncio.run(run())
    assert app.messages == [(5, False)]


def test_the_slow_clients_line_names_the_addresses_behind_most_of_them(monkeypatch, caplog) -> None:
    """A body that never arrives is never authenticated: its address is the only "who" an operator gets."""
    import types

    import gateway.edge.state as state_module

    clock = [1000.0]
    monkeypatch.setattr(state_module, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    edge = BodyRecorder().edge
    with caplog.at_level("WARNING", logger="gateway.edge"):
        edge.closed_by_deadline("body", "10.0.0.1")  # the first one is logged at once
        for i in range(12):
            edge.closed_by_deadline("header", f"10.0.1.{i % 7}")
        edge.admit("main")  # under the cap: counted in, not a slow client
        clock[0] += 10.0
        edge.closed_by_deadline("header", "10.0.1.0")
    lines = [r for r in caplog.records if r.getMessage() == "slow or refused clients"]
    assert len(lines) == 2
    assert lines[0].fields["top_clients"] == {"10.0.0.1": 1}
    second = lines[1].fields
    assert second["closed_header_deadline"] == 13
    assert second["clients"] == 7
    assert len(second["top_clients"]) == 5
    assert second["top_clients"]["10.0.1.0"] == 3  # i = 0 and 7, and the last one


def test_a_deadline_names_the_client_address() -> None:
    app = BodyRecorder()
    noted: list[tuple[str, str | None]] = []

    async def run() -> None:
        _, protocol = await _serve(app, [_head(100), b"0123456789"])
        assert protocol.edge is not None
        record = lambda phase, client=None: noted.append((phase, client))  # noqa: E731
        protocol.edge.closed_by_deadline = record  # type: ignore[method-assign]
        protocol.deadline_passed()

    asyncio.run(run())
    assert noted == [("body", "127.0.0.1")]


def test_a_connection_reset_while_kept_alive_frees_its_protocol_at_once() -> None:
    """uvicorn cancels the keep-alive timer only on a clean close; after a reset (an HTTP client pool
    dropping an idle connection) the timer kept the protocol, its last request and the request's record
    alive until it fired, and then as a reference cycle for the garbage collector."""
    app = BodyRecorder()

    async def run() -> weakref.ref[EdgeProtocol]:
        transport, protocol = await _serve(app, [_head(2) + b"{}"])
        assert transport.written.endswith(b"\r\n\r\n2") and not transport.closed  # answered, kept alive
        assert protocol.timeout_keep_alive_task is not None
        protocol.connection_lost(ConnectionResetError(104, "Connection reset by peer"))
        assert protocol.timeout_keep_alive_task is None
        return weakref.ref(protocol)

    gc.disable()  # freed by reference counting alone: nothing left for the collector
    try:
        gone = asyncio.run(run())
        assert gone() is None
    finally:
        gc.enable()


# ---- the deadlines, on a clock the test moves ------------------------------------------------------------
# Each deadline is checked from both sides: nothing has happened a tick before its setting, and the 408 is
# out within two ticks after it. A deadline armed at another value (half of it, ten times it) fails here;
# the tests against real servers (test_edge.py) bound it only by a margin of seconds.

DEADLINES = EdgeSettings(header_timeout=2.0, body_timeout=3.0, send_timeout=4.0)
TICK = 0.1  # the edge's timer slot for these settings (gateway/edge/state.py): how late a deadline passes


def _closed_by(app: BodyRecorder, phase: str) -> float:
    return sample_sum(app.registry, "gateway_connections_closed_by_deadline_total", phase=phase)


@pytest.mark.parametrize("trickle", [[], [b"POST /x HTTP/1.1\r\n", b"Host: t\r\n", b"Content-Ty"]])
def test_the_head_deadline_runs_from_accept_and_passes_at_its_setting(trickle: list[bytes]) -> None:
    """Nothing sent, or a head a piece at a time: the pieces do not move the deadline."""
    app = BodyRecorder(DEADLINES)
    clock = FakeLoop()

    async def run() -> None:
        accepted = clock.now
        transport, protocol = await _serve(app, [], clock)
        for piece in trickle:
            clock.run_until(clock.now + 0.5)
            protocol.data_received(piece)
        clock.run_until(accepted + 2.0 - TICK)
        assert transport.written == b"" and not transport.closed
        clock.run_until(accepted + 2.0 + 2 * TICK)
        assert transport.written.startswith(b"HTTP/1.1 408 ") and transport.closed

    asyncio.run(run())
    assert _closed_by(app, "header") == 1
    assert app.started == 0


def test_the_body_deadline_runs_from_the_headers_and_a_trickle_does_not_move_it() -> None:
    app = BodyRecorder(DEADLINES)
    clock = FakeLoop()

    async def run() -> None:
        transport, protocol = await _serve(app, [], clock)
        clock.run_until(clock.now + 1.5)  # the head takes most of its own deadline, which then stops
        protocol.data_received(_head(100))
        headers_in = clock.now
        for _ in range(25):  # a byte every tenth of a second
            clock.run_until(clock.now + 0.1)
            protocol.data_received(b"x")
        clock.run_until(headers_in + 3.0 - TICK)
        assert transport.written == b"" and not transport.closed
        clock.run_until(headers_in + 3.0 + 2 * TICK)
        assert transport.written.startswith(b"HTTP/1.1 408 ") and transport.closed

    asyncio.run(run())
    assert (_closed_by(app, "body"), _closed_by(app, "header")) == (1, 0)
    assert app.started == 0


def test_a_later_requests_head_deadline_runs_from_its_first_byte() -> None:
    """On a kept-alive connection the time between requests counts against no request deadline (the
    keep-alive timeout is uvicorn's); the next head has its whole deadline from its first byte."""
    app = BodyRecorder(DEADLINES)
    clock = FakeLoop()

    async def run() -> None:
        transport, protocol = await _serve(app, [_head(2) + b"{}"], clock)
        assert transport.written.endswith(b"\r\n\r\n2")
        answered = len(transport.written)
        clock.run_until(clock.now + 10.0)
        assert len(transport.written) == answered and not transport.closed
        protocol.data_received(b"PO")
        began = clock.now
        clock.run_until(began + 2.0 - TICK)
        assert len(transport.written) == answered and not transport.closed
        clock.run_until(began + 2.0 + 2 * TICK)
        assert transport.written[answered:].startswith(b"HTTP/1.1 408 ") and transport.closed

    asyncio.run(run())
    assert _closed_by(app, "header") == 1


@pytest.mark.parametrize(
    ("settings", "tick"),
    [
        (EdgeSettings(), 0.1),
        (EdgeSettings(header_timeout=0.2, body_timeout=0.3), 0.05),
        (EdgeSettings(header_timeout=0.5, body_timeout=0.2), 0.05),
    ],
)
def test_the_timer_is_late_by_a_tenth_of_a_second_at_most_or_a_quarter_of_the_shortest_deadline(
    settings: EdgeSettings, tick: float
) -> None:
    assert BodyRecorder(settings).edge.deadlines(FakeLoop()).tick == pytest.approx(tick)  # type: ignore[arg-type]


class Unread(Recorder):
    """A transport whose client reads nothing until told: what is written stays in its buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.unsent = 0
        self.aborted = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        super().write(data)
        self.unsent += len(data)

    def get_write_buffer_size(self) -> int:
        return self.unsent

    def abort(self) -> None:
        self.aborted = self.closed = True


def test_the_send_deadline_is_armed_at_its_setting_and_cuts_only_a_client_that_reads_nothing() -> None:
    app = BodyRecorder(DEADLINES)

    def passes(protocol: EdgeProtocol) -> None:
        """The send deadline's timer fires, as the loop runs it when its time comes."""
        timer = protocol._stalled
        assert timer is not None
        left = timer.when() - asyncio.get_running_loop().time()
        assert 4.0 - 1.0 < left <= 4.0  # armed at edge.send_timeout from now
        timer.cancel()
        protocol._check_sending()

    async def run() -> Unread:
        transport = Unread()
        _, protocol = await _serve(app, [_head(2) + b"{}"], transport=transport)
        assert transport.written.endswith(b"\r\n\r\n2")  # the answer, all of it still in the buffer
        transport.unsent -= 1  # the client reads a byte in the period: another period
        passes(protocol)
        assert not transport.aborted
        passes(protocol)  # nothing read in this one
        assert transport.aborted
        return transport

    asyncio.run(run())
    assert _closed_by(app, "send") == 1


def test_past_the_cap_a_connection_gets_503_unread_and_holds_no_place_or_deadline() -> None:
    app = BodyRecorder(DEADLINES, cap=1)
    clock = FakeLoop()

    def open_count() -> float:
        return sample_sum(app.registry, "gateway_connections_open", listener="main")

    async def run() -> None:
        first, admitted = await _serve(app, [], clock)
        refused, extra = await _serve(app, [_head(2) + b"{}"], clock)
        status, error = _answer(refused.written)
        assert status == b"HTTP/1.1 503 Service Unavailable" and error["code"] == "too_many_connections"
        assert refused.closed and not first.closed
        assert sample_sum(app.registry, "gateway_connections_refused_total", listener="main") == 1
        extra.connection_lost(None)  # the refused one leaves: the admitted one keeps its place
        assert open_count() == 1
        clock.run_until(clock.now + 2.0 + 2 * TICK)
        assert first.written.startswith(b"HTTP/1.1 408 ")  # only the admitted one had a deadline
        admitted.connection_lost(None)
        assert open_count() == 0
        again, _ = await _serve(app, [_head(2) + b"{}"], clock)
        assert again.written.startswith(b"HTTP/1.1 200 ")

    asyncio.run(run())
    assert app.started == 1
    assert _closed_by(app, "header") == 1


# ---- the head's bounds, and trailer fields -------------------------------------------------------------


def _answer(written: bytearray) -> tuple[bytes, dict[str, Any]]:
    """The status line and JSON error of the one answer written."""
    head, _, body = bytes(written).partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], orjson.loads(body)["error"]


def test_a_flood_of_small_header_lines_gets_431_at_the_count_and_nothing_more_is_kept() -> None:
    app = BodyRecorder()

    async def run() -> tuple[Recorder, EdgeProtocol]:
        transport, protocol = await _serve(app, [b"GET /healthz HTTP/1.1\r\n"])
        for i in range(1000):
            if transport.closed:
                break
            protocol.data_received(b"X-H%d: v\r\n" % i)
        protocol.data_received(b"X-After: v\r\n" * 1000)  # ignored once refused
        await _let_run()
        return transport, protocol

    transport, protocol = asyncio.run(run())
    status, error = _answer(transport.written)
    assert status == b"HTTP/1.1 431 Request Header Fields Too Large"
    assert error["code"] == "request_header_fields_too_large"
    assert "100 header fields" in error["message"]
    assert transport.closed
    assert len(protocol.headers) == 100
    assert app.started == 0


def test_one_endless_header_value_gets_431_at_the_line_bound() -> None:
    """httptools keeps a value until its line ends, and hands it to no callback before: the bytes
    received after the last line break bound it."""
    app = BodyRecorder()
    pieces = 0

    async def run() -> Recorder:
        nonlocal pieces
        transport, protocol = await _serve(app, [b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Endless: "])
        while not transport.closed and pieces < 1000:
            protocol.data_received(b"v" * 1024)
            pieces += 1
        await _let_run()
        return transport

    transport = asyncio.run(run())
    status, error = _answer(transport.written)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert "longer than 8192 bytes" in error["message"]
    assert pieces == 8  # "X-Endless: " and 8 KiB of value: past 8,192 bytes
    assert app.started == 0


def test_header_fields_past_the_total_bound_get_431() -> None:
    app = BodyRecorder()
    head = b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 800) for i in range(90))
    transport, _ = asyncio.run(_serve(app, [head + b"\r\n"]))
    status, error = _answer(transport.written)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert "larger than 65536 bytes" in error["message"]
    assert app.started == 0


def test_a_request_line_past_the_line_bound_gets_431() -> None:
    app = BodyRecorder()
    transport, _ = asyncio.run(_serve(app, [b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n"]))
    status, error = _answer(transport.written)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert "request line" in error["message"]


def test_the_head_bounds_are_settings_and_a_head_at_them_is_served() -> None:
    with pytest.raises(ValidationError):
        EdgeSettings(max_header_bytes=4096, max_header_line_bytes=8192)  # a line longer than the head
    settings = EdgeSettings(max_headers=10, max_header_bytes=2048, max_header_line_bytes=1024)

    def head(fields: int, value: int = 1) -> bytes:
        lines = b"".join(b"X-F%d: %s\r\n" % (i, b"v" * value) for i in range(fields))
        return b"POST /x HTTP/1.1\r\n" + lines + b"Content-Length: 2\r\n\r\n{}"

    served, _ = asyncio.run(_serve(BodyRecorder(settings), [head(9)]))  # 10 with Content-Length
    assert served.written.startswith(b"HTTP/1.1 200 ")
    refused, _ = asyncio.run(_serve(BodyRecorder(settings), [head(10)]))
    assert refused.written.startswith(b"HTTP/1.1 431 ")
    # One line of 1,024 bytes (name and value) is served; one more byte is not.
    at_line, _ = asyncio.run(_serve(BodyRecorder(settings), [head(1, 1024 - 4)]))
    assert at_line.written.startswith(b"HTTP/1.1 200 ")
    past_line, _ = asyncio.run(_serve(BodyRecorder(settings), [head(1, 1024 - 3)]))
    assert past_line.written.startswith(b"HTTP/1.1 431 ")


def _chunked(trailers: bytes, data: bytes = b"{}") -> bytes:
    return (
        b"POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n" % len(data)
        + data
        + b"\r\n0\r\n"
        + trailers
        + b"\r\n"
    )


def test_trailer_fields_never_become_request_headers() -> None:
    """Dropped, and only the trailer section counts against the head's bounds: chunk data of any shape
    (here one line longer than the line bound, split across reads) does not."""
    app = BodyRecorder()
    trailers = (
        b"Authorization: Bearer stolen\r\nX-Gateway-Route: autoregressive\r\nContent-Encoding: gzip\r\n"
    )
    data = b"x" * 20_000
    request = _chunked(trailers, data)
    transport, _ = asyncio.run(_serve(app, [request[i : i + 3000] for i in range(0, len(request), 3000)]))
    assert transport.written.startswith(b"HTTP/1.1 200 ")
    assert transport.written.endswith(b"\r\n\r\n%d" % len(data))  # the body, whole
    names = [name for name, _ in app.headers[0]]
    assert names == [b"host", b"transfer-encoding"]


def test_trailer_fields_count_against_the_head_bounds() -> None:
    many = BodyRecorder()
    transport, _ = asyncio.run(_serve(many, [_chunked(b"".join(b"X-T%d: v\r\n" % i for i in range(200)))]))
    assert transport.written.startswith(b"HTTP/1.1 431 ") and transport.closed
    assert many.started == 0
    endless = BodyRecorder()
    start = _chunked(b"")[:-2] + b"X-Endless: "  # the trailer section, its first value never ending
    transport, _ = asyncio.run(_serve(endless, [start] + [b"v" * 1024] * 20))
    assert transport.written.startswith(b"HTTP/1.1 431 ") and transport.closed
    assert endless.started == 0


def test_a_pipelined_head_past_a_bound_never_cuts_the_answer_before_it() -> None:
    app = BodyRecorder()
    first = _head(2) + b"{}"
    second = b"GET /x HTTP/1.1\r\n" + b"X-F: v\r\n" * 200
    transport, _ = asyncio.run(_serve(app, [first + second]))
    assert transport.written.startswith(b"HTTP/1.1 200 ")
    assert transport.written.endswith(b"\r\n\r\n2")  # the first answer, whole, and nothing after it
    assert transport.closed
    assert app.started == 1


def test_an_unparseable_request_gets_the_json_error_envelope() -> None:
    transport, _ = asyncio.run(_serve(BodyRecorder(), [b"GET / HTTP/1.1\r\nBad Header\r\n\r\n"]))
    status, error = _answer(transport.written)
    assert status == b"HTTP/1.1 400 Bad Request"
    assert error["code"] == "invalid_http"
    assert transport.closed
