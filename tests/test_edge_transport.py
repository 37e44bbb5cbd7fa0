"""The head-holding transport (gateway/edge/transport.py): a response's head goes out with its first
body bytes in one write, alone at the next loop turn when no body follows in this one, and the bytes'
order never changes. A recording transport on a real event loop; no sockets."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from gateway.edge.transport import HeadHoldingTransport

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


class Recorder(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False
        self.buffered = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def get_write_buffer_size(self) -> int:
        return self.buffered


def _run(body: Coroutine[Any, Any, None]) -> None:
    asyncio.run(body)


def test_a_head_and_its_body_go_out_in_one_write() -> None:
    async def body() -> None:
        inner = Recorder()
        transport = HeadHoldingTransport(inner, asyncio.get_running_loop())
        transport.write(HEAD)
        assert inner.writes == []
        assert transport.get_write_buffer_size() == len(HEAD)
        transport.write(b"{}")
        assert inner.writes == [HEAD + b"{}"]
        await asyncio.sleep(0)  # the cancelled flush sends nothing more
        assert inner.writes == [HEAD + b"{}"]

    _run(body())


def test_a_head_with_no_body_this_turn_goes_out_alone_next_turn() -> None:
    async def body() -> None:
        inner = Recorder()
        transport = HeadHoldingTransport(inner, asyncio.get_running_loop())
        transport.write(HEAD)
        await asyncio.sleep(0)
        assert inner.writes == [HEAD]
        transport.write(b"data: 1\n\n")  # a stream's chunks are written as they come
        assert inner.writes == [HEAD, b"data: 1\n\n"]

    _run(body())


def test_close_sends_the_held_head_first_and_abort_drops_it() -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        inner = Recorder()
        transport = HeadHoldingTransport(inner, loop)
        transport.write(HEAD)
        transport.close()
        assert inner.writes == [HEAD]
        assert inner.closed

        inner = Recorder()
        transport = HeadHoldingTransport(inner, loop)
        transport.write(HEAD)
        transport.abort()
        await asyncio.sleep(0)
        assert inner.writes == []
        assert inner.aborted

    _run(body())


def test_an_interim_100_continue_and_other_bytes_are_not_held() -> None:
    async def body() -> None:
        inner = Recorder()
        transport = HeadHoldingTransport(inner, asyncio.get_running_loop())
        transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # the client waits for it to send its body
        transport.write(b"5\r\nhello\r\n")
        assert inner.writes == [b"HTTP/1.1 100 Continue\r\n\r\n", b"5\r\nhello\r\n"]

    _run(body())


def test_a_head_is_not_held_on_a_closing_transport() -> None:
    async def body() -> None:
        inner = Recorder()
        inner.closed = True
        transport = HeadHoldingTransport(inner, asyncio.get_running_loop())
        transport.write(HEAD)
        assert inner.writes == [HEAD]

    _run(body())
