"""The default upstream client (gateway/upstream/httptools_client/) against scripted HTTP servers on
loopback: keep-alive reuse, the stale-connection retry, framing, back-pressure, errors and the pool bound.
The proxy's behaviour on top of it is covered end to end by the rest of the suite, which runs on it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from gateway.upstream import UpstreamBroken, UpstreamConnectError, UpstreamTimeout
from gateway.upstream.httptools_client import HttptoolsUpstream
from gateway.upstream.httptools_client.response import _HIGH_WATER
from gateway.upstream.settings import BackendSettings

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Server:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[bytes] = []
        self.port = 0
        self.open: dict[asyncio.Task, asyncio.StreamWriter] = {}

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self.open[task] = writer
        try:
            await self.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            self.open.pop(task, None)

    async def stop(self) -> None:
        """Close every connection still open and let its handler finish."""
        for writer in self.open.values():
            writer.close()
        if self.open:
            await asyncio.wait(list(self.open), timeout=5)

    async def read_request(self, reader: asyncio.StreamReader) -> bytes | None:
        """One request (head and Content-Length body), or None when the client closed the connection."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        request = head + await reader.readexactly(length)
        self.requests.append(request)
        return request


@asynccontextmanager
async def serving(handler: Callable[[Server, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]):
    box: list[Server] = []

    async def call(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await handler(box[0], reader, writer)

    server = Server(call)
    box.append(server)
    listener = await asyncio.start_server(server._serve, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()
        await server.stop()


def backend(port: int, **timeouts: float) -> BackendSettings:
    return BackendSettings(
        name="b",
        kind="autoregressive",
        url=f"http://127.0.0.1:{port}/prefix",
        model="m",
        timeouts=timeouts or {},
    )


OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


async def keep_alive(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while await server.read_request(reader) is not None:
        writer.write(OK)
        await writer.drain()


async def eventually(predicate: Callable[[], bool], within: float = 5.0) -> bool:
    """Poll a condition on the loop (``within`` only bounds a hung test; no time is asserted)."""
    for _ in range(int(within / 0.01)):
        if predicate():
            return True
        await asyncio.sleep(0.01)
    return predicate()


@pytest.fixture
async def client() -> AsyncIterator[HttptoolsUpstream]:
    upstream = HttptoolsUpstream([], limit=16)
    yield upstream
    await upstream.aclose()


async def post(client: HttptoolsUpstream, b: BackendSettings, **kw) -> tuple[int, bytes]:
    response = await client.send(
        b, "/v1/chat/completions", body=b'{"a":1}', headers=[("x-a", "1")], stream=False, **kw
    )
    try:
        return response.status, await response.read()
    finally:
        await response.aclose()


async def test_request_bytes_and_keep_alive_reuse(client):
    async with serving(keep_alive) as server:
        b = backend(server.port)
        assert [await post(client, b) for _ in range(3)] == [(200, b"{}")] * 3
    assert server.connections == 1  # one connection, reused
    head = server.requests[0].decode()
    assert head.startswith("POST /prefix/v1/chat/completions HTTP/1.1\r\n")
    assert f"host: 127.0.0.1:{server.port}\r\n" in head and "x-a: 1\r\n" in head
    assert "content-length: 7\r\n" in head and head.endswith('{"a":1}')


async def test_a_stale_idle_connection_is_replaced_without_an_error(client):
    async def one_then_close(server: Server, reader, writer) -> None:
        # Answers one request, then closes the connection as it is reused (no byte of an answer sent).
        await server.read_request(reader)
        writer.write(OK)
        await writer.drain()
        await server.read_request(reader)

    async with serving(one_then_close) as server:
        b = backend(server.port)
        assert await post(client, b) == (200, b"{}")
        assert await post(client, b) == (200, b"{}")
    # The first connection carried the first request and the reused attempt; the retry opened the second.
    assert server.connections == 2
    assert len(server.requests) == 3


async def test_a_fresh_connection_closed_before_an_answer_is_an_error(client):
    async def close_at_once(server: Server, reader, writer) -> None:
        await server.read_request(reader)

    async with serving(close_at_once) as server:
        with pytest.raises(UpstreamBroken):
            await post(client, backend(server.port))
    assert server.connections == 1  # a new connection is not retried: the request may have been seen


async def test_close_delimited_and_chunked_bodies(client):
    body = b"x" * 100_000

    async def close_delimited(server: Server, reader, writer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n" + body)
        await writer.drain()

    async with serving(close_delimited) as server:
        assert await post(client, backend(server.port)) == (200, body)

    async def chunked(server: Server, reader, writer) -> None:
        while await server.read_request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            for part in (b"data: 1\n\n", b"data: 2\n\n"):
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                await writer.drain()
            writer.write(b"0\r\n\r\n")

    async with serving(chunked) as server:
        b = backend(server.port)
        assert await post(client, b) == (200, b"data: 1\n\ndata: 2\n\n")
        assert await post(client, b) == (200, b"data: 1\n\ndata: 2\n\n")
    assert server.connections == 1


async def test_a_stream_is_relayed_as_it_arrives_with_back_pressure(client):
    release = asyncio.Event()
    total = 2 * 1024 * 1024  # well above the high-water mark: reading must pause and resume

    async def streaming(server: Server, reader, writer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        await writer.drain()
        await release.wait()
        piece = b"y" * 65536
        for _ in range(total // len(piece)):
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async with serving(streaming) as server:
        response = await client.send(backend(server.port), "/v1/chat/completions", headers=[], stream=True)
        assert response.status == 200
        assert await response.next_chunk() == b"first"  # before the rest exists
        release.set()
        for _ in range(500):  # the server fills the buffers until reading pauses at the high-water mark
            if response._paused:
                break
            await asyncio.sleep(0.01)
        assert response._paused
        # Paused means the socket is no longer read: what waits is the high-water mark plus at most one
        # read of the transport (256 KiB), and it does not grow while nobody takes it.
        bound = _HIGH_WATER + 256 * 1024
        assert response._buffered <= bound
        for _ in range(20):
            await asyncio.sleep(0.01)
            assert response._paused and response._buffered <= bound
        received = 0
        while (chunk := await response.next_chunk()) is not None:
            received += len(chunk)
        await response.aclose()
    assert received == total


async def test_abandoned_answers_close_their_connection(client):
    async def slow(server: Server, reader, writer) -> None:
        while await server.read_request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n")
            await writer.drain()

    async with serving(slow) as server:
        b = backend(server.port)
        for _ in range(2):
            response = await client.send(b, "/x", headers=[], stream=True)
            assert await response.next_chunk() == b"first"
            await response.aclose()  # half-way: the backend must see the connection close
    assert server.connections == 2


async def test_an_answered_stream_keeps_its_connection_once_the_message_ends(client, monkeypatch):
    """[DONE] seen, the last empty chunk still in flight: the connection goes back to the pool when it
    arrives, and is closed when it does not come in time (or more than a message's end comes)."""
    monkeypatch.setattr("gateway.upstream.httptools_client.response._DRAIN_SECONDS", 0.2)
    tails = [b"0\r\n\r\n", b"", b"%x\r\n%s\r\n" % (100_000, b"z" * 100_000)]
    ended = asyncio.Event()

    async def done_then_end(server: Server, reader, writer) -> None:
        while await server.read_request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\ne\r\ndata: [DONE]\n\n\r\n")
            await writer.drain()
            await ended.wait()
            ended.clear()
            writer.write(tails.pop(0))
            await writer.drain()

    async with serving(done_then_end) as server:
        b = backend(server.port)
        # 1st: the end comes, the connection is pooled (and reused by the 2nd); the 2nd's end never
        # comes: closed when the wait runs out; the 3rd's "end" is a body: closed at once.
        for pooled in (True, False, False):
            response = await client.send(b, "/x", headers=[], stream=True)
            assert await response.next_chunk() == b"data: [DONE]\n\n"
            await response.aclose(answered=True)
            assert client._in_use == 1  # the slot is held while the end is awaited
            ended.set()
            assert await eventually(lambda: client._in_use == 0)
            assert bool(client._origins[b.base_url].idle) is pooled
        assert server.connections == 2


async def test_interim_answers_are_skipped(client):
    async def interim(server: Server, reader, writer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + OK)
        await writer.drain()
        await server.read_request(reader)

    async with serving(interim) as server:
        assert await post(client, backend(server.port)) == (200, b"{}")


async def test_bad_http_and_a_broken_body_are_upstream_broken(client):
    async def garbage(server: Server, reader, writer) -> None:
        await server.read_request(reader)
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        await writer.drain()
        await server.read_request(reader)

    async with serving(garbage) as server:
        with pytest.raises(UpstreamBroken):
            await post(client, backend(server.port))

    async def cut(server: Server, reader, writer) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this")
        await writer.drain()

    async with serving(cut) as server:
        with pytest.raises(UpstreamBroken):
            await post(client, backend(server.port))


async def test_connect_errors_and_timeouts(client):
    async with serving(keep_alive) as server:
        port = server.port
    with pytest.raises(UpstreamConnectError):  # nothing listens there any more
        await post(client, backend(port))

    async def silent(server: Server, reader, writer) -> None:
        await server.read_request(reader)
        await reader.read()  # never answers

    async with serving(silent) as server:
        with pytest.raises(UpstreamTimeout) as caught:
            await post(client, backend(server.port, first_byte=0.2, total=0.2))
        assert caught.value.phase == "total"


async def test_the_pool_is_bounded_and_a_waiter_gets_the_freed_connection():
    client = HttptoolsUpstream([], limit=1)
    try:
        async with serving(keep_alive) as server:
            short = backend(server.port, first_byte=0.3, total=0.3)
            held = await client.send(short, "/x", headers=[], stream=False)
            with pytest.raises(UpstreamConnectError, match="pool"):
                await post(client, short)  # the only slot is taken for the whole deadline
            # A waiter with all the time it needs: it queues, and gets the slot once the first is done.
            waiting = asyncio.ensure_future(post(client, backend(server.port, first_byte=30, total=30)))
            assert await eventually(lambda: len(client._waiters) == 1)
            assert not waiting.done()
            assert await held.read() == b"{}"
            await held.aclose()
            assert await waiting == (200, b"{}")
        assert server.connections == 1
    finally:
        await client.aclose()


async def test_line_breaks_in_headers_are_refused(client):
    async with serving(keep_alive) as server:
        with pytest.raises(UpstreamConnectError):
            await client.send(
                backend(server.port), "/x", headers=[("x-a", "1\r\nx-injected: 1")], stream=False
            )
    assert server.requests == []
