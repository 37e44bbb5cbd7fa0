"""A bare HTTP/1.1 server that spends a fixed amount of CPU on each request: the event loop alone under load.

    python3 bench/loops.py --loop uvloop --port 9200 --cpu-us 300

No framework, no uvicorn, no upstream: an asyncio Protocol that parses a keep-alive request (head and
Content-Length body), busy-waits ``--cpu-us`` microseconds (about what the gateway spends per request),
and answers a small JSON body. bench/run.py part 0b drives it with wrk at concurrency 64 on each loop, so
that what the loop itself does to the tail of a saturated single-threaded server is measured apart from
the gateway's code: the numbers ``server.loop`` was chosen by.
"""

from __future__ import annotations

import argparse
import asyncio
import time

ANSWER = b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}'


class Handler(asyncio.Protocol):
    def __init__(self, cpu: float) -> None:
        self.cpu = cpu
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = self.buffer[:end].lower()
            at = head.find(b"content-length:")
            length = int(head[at + 15 :].split(b"\r\n", 1)[0]) if at >= 0 else 0
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            # Answered from a task, as an ASGI server runs the app: the loop schedules the work.
            asyncio.get_running_loop().create_task(self.answer())

    async def answer(self) -> None:
        until = time.perf_counter() + self.cpu
        while time.perf_counter() < until:
            pass
        assert self.transport is not None
        self.transport.write(ANSWER)


async def serve(port: int, cpu: float) -> None:
    server = await asyncio.get_running_loop().create_server(lambda: Handler(cpu), "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cpu-us", type=float, default=300.0)
    args = parser.parse_args()
    main_ = serve(args.port, args.cpu_us / 1e6)
    if args.loop == "uvloop":
        import uvloop

        uvloop.run(main_)
    else:
        asyncio.run(main_)


if __name__ == "__main__":
    main()
