"""The upstream deadlines (gateway/upstream/base.py) as each client applies them, against a scripted server
on loopback. A non-streamed answer is bounded by the total alone (vLLM sends nothing of it, headers
included, until it is whole); a stream by first_byte, then idle between chunks, then the total. The server
answers some time after one deadline and long before the others, so the outcome is all that is asserted:
no time is."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from gateway.upstream import UpstreamClient, UpstreamTimeout, build_upstream
from gateway.upstream.settings import BackendSettings

CLIENTS = ("httptools", "httpx")
SHORT = 0.05  # the deadline the server misses
LATE = 0.25  # how late it is: well past SHORT, far from every other deadline
LONG = 30.0
BODY = b'{"choices":[]}'
CHUNK = b"data: {}\n\n"


async def _read_request(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    await reader.readexactly(length)


@asynccontextmanager
async def answering(*pauses: float, chunks: int = 1) -> AsyncIterator[int]:
    """A server that answers each request with a head, then ``chunks`` chunks of a chunked body and its
    end, pausing ``pauses[i]`` seconds before part i (the head is part 0; no pause past the list)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _read_request(reader)
            parts = [
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            ]
            parts += [b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK)] * (chunks - 1)
            parts += [b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)]
            for i, part in enumerate(parts):
                if i < len(pauses) and pauses[i]:
                    await asyncio.sleep(pauses[i])
                writer.write(part)
                await writer.drain()
            await reader.read()  # until the client closes
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


def backend(port: int, **timeouts: float) -> BackendSettings:
    return BackendSettings(
        name="b", kind="autoregressive", url=f"http://127.0.0.1:{port}", model="m", timeouts=timeouts
    )


@asynccontextmanager
async def upstream(kind: str, b: BackendSettings) -> AsyncIterator[UpstreamClient]:
    client = build_upstream([b], kind)
    try:
        yield client
    finally:
        await client.aclose()  # type: ignore[attr-defined]


async def fetch(kind: str, b: BackendSettings, *, stream: bool) -> bytes:
    """The whole answer, read as the proxy reads it: whole when not streamed, chunk by chunk when it is."""
    async with upstream(kind, b) as client:
        response = await client.send(b, "/v1/chat/completions", body=b"{}", headers=[], stream=stream)
        try:
            if not stream:
                return await response.read()
            return b"".join([chunk async for chunk in response.chunks()])
        finally:
            await response.aclose()


async def phase_of_timeout(kind: str, b: BackendSettings, *, stream: bool) -> str:
    with pytest.raises(UpstreamTimeout) as caught:
        await fetch(kind, b, stream=stream)
    return caught.value.phase


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("pauses", [(LATE,), (0, LATE)], ids=["head late", "body late"])
async def test_a_non_streamed_answer_later_than_first_byte_is_served_within_the_total(kind, pauses):
    async with answering(*pauses) as port:
        assert await fetch(kind, backend(port, first_byte=SHORT, total=LONG), stream=False) == BODY


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_non_streamed_answer_later_than_the_total_times_out(kind):
    async with answering(LATE) as port:
        b = backend(port, first_byte=SHORT, total=SHORT)
        assert await phase_of_timeout(kind, b, stream=False) == "total"


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("pauses", [(LATE,), (0, LATE)], ids=["head late", "first chunk late"])
async def test_a_stream_whose_first_byte_is_late_times_out_in_first_byte(kind, pauses):
    async with answering(*pauses) as port:
        b = backend(port, first_byte=SHORT, idle=LONG, total=LONG)
        assert await phase_of_timeout(kind, b, stream=True) == "first_byte"


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_stream_is_bounded_by_idle_between_chunks_not_by_first_byte(kind):
    async with answering(0, 0, LATE, chunks=3) as port:
        # The second chunk comes past first_byte but within idle: served.
        assert await fetch(kind, backend(port, first_byte=SHORT, idle=LONG, total=LONG), stream=True)
    async with answering(0, 0, LATE, chunks=3) as port:
        b = backend(port, first_byte=LONG, idle=SHORT, total=LONG)
        assert await phase_of_timeout(kind, b, stream=True) == "idle"


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_stream_that_keeps_coming_is_cut_at_the_total(kind):
    """Every chunk within idle of the one before, and the whole past the total."""
    async with answering(0, 0, *[LATE / 4] * 8, chunks=10) as port:
        b = backend(port, first_byte=LATE, idle=LONG, total=LATE)
        assert await phase_of_timeout(kind, b, stream=True) == "total"
