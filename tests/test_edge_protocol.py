"""The edge protocol (gateway/edge/protocol.py) hands the app a request body whole: uvicorn's own protocol
wakes the app for every piece that arrives, which a client sending a byte at a time turns into a task step
per byte. Bytes are fed to the protocol on a real event loop through a recording transport; no sockets."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client import CollectorRegistry
from starlette.types import Receive, Scope, Send
from uvicorn.config import Config
from uvicorn.server import ServerState

from gateway.edge.protocol import EdgeProtocol
from gateway.edge.settings import EdgeSettings
from gateway.edge.state import EdgeState
from gateway.telemetry.metrics import Metrics


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

    def __init__(self) -> None:
        self.edge = EdgeState(EdgeSettings(), 100, Metrics(CollectorRegistry(), ["b"]), self)
        self.messages: list[tuple[int, bool]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
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


async def _serve(app: BodyRecorder, pieces: list[bytes]) -> tuple[Recorder, EdgeProtocol]:
    config = Config(app, http=EdgeProtocol, log_config=None, lifespan="off")
    config.load()
    protocol = EdgeProtocol(config, ServerState(), {})
    transport = Recorder()
    protocol.connection_made(transport)
    for piece in pieces:
        protocol.data_received(piece)
        for _ in range(5):  # let the app run, as it would between two reads
            await asyncio.sleep(0)
    for _ in range(20):
        await asyncio.sleep(0)
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


def test_a_client_that_leaves_mid_body_is_a_disconnect_for_the_waiting_app() -> None:
    app = BodyRecorder()

    async def run() -> None:
        _, protocol = await _serve(app, [_head(100), b"0123456789"])
        assert app.messages == []  # the app waits for the rest of the body
        protocol.connection_lost(None)
        for _ in range(5):
            await asyncio.sleep(0)

    asyncio.run(run())
    assert app.messages == [(-1, False)]
