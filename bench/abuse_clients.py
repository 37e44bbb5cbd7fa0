"""The clients and gauges of bench/abuse.py: raw HTTP/1.1 on sockets (whole requests, floods, trickles),
the gateway process's RSS and its peak, and the slowest health check while a probe runs."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "MB",
    "Conn",
    "Ctx",
    "Outcome",
    "Peak",
    "exchange",
    "flood_for",
    "health_watch",
    "post",
    "rss_mb",
    "status_of",
    "trickle",
]

MB = 1024 * 1024


@dataclass
class Ctx:
    host: str
    port: int
    key: str
    quick: bool
    header_timeout: float
    body_timeout: float
    ledger: Path
    cache: dict[str, bytes] = field(default_factory=dict)

    def n(self, full: int, quick: int) -> int:
        return quick if self.quick else full


@dataclass
class Outcome:
    statuses: Counter[str]
    detail: str = ""


# ---- raw HTTP/1.1 on a socket ------------------------------------------------------------------------------


def status_of(answer: bytes) -> str:
    """The status code of an answer, or what happened instead."""
    if answer.startswith(b"HTTP/1.1 ") and len(answer) >= 12:
        return answer[9:12].decode()
    return "closed" if not answer else "garbled"


class Conn:
    """A raw socket on the event loop. Sending and receiving are apart: a send that fails (the gateway
    closed first) leaves what it answered readable, where an asyncio stream would drop it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.answer = asyncio.ensure_future(self._read_all())

    @classmethod
    async def open(cls, ctx: Ctx) -> Conn:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (ctx.host, ctx.port))
        return cls(sock)

    async def _read_all(self) -> bytes:
        data = b""
        with contextlib.suppress(ConnectionError):
            while chunk := await self.loop.sock_recv(self.sock, 65536):
                data += chunk
        return data

    async def send(self, data: bytes) -> bool:
        """Whether ``data`` went out whole before the gateway answered or closed."""
        sending = asyncio.ensure_future(self.loop.sock_sendall(self.sock, data))
        await asyncio.wait([sending, self.answer], return_when=asyncio.FIRST_COMPLETED)
        if not sending.done():
            sending.cancel()
            return False
        return sending.exception() is None

    async def status(self, within: float) -> str:
        """The answer's status once the gateway closes, or "open" if it has not within ``within`` s."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.answer), within)
        return status_of(self.answer.result()) if self.answer.done() else "open"

    def close(self) -> None:
        self.answer.cancel()
        self.sock.close()


async def exchange(ctx: Ctx, request: bytes, within: float = 10.0) -> bytes:
    """Send ``request`` whole on a new connection; everything answered until the close (or ``within``)."""
    conn = await Conn.open(ctx)
    try:
        await conn.send(request)
        await conn.status(within)
        return conn.answer.result() if conn.answer.done() else b""
    finally:
        conn.close()


async def stream_until_closed(ctx: Ctx, first: bytes, chunk: bytes, until: float) -> tuple[str, int]:
    """Send ``first``, then ``chunk`` again and again until the gateway answers or ``until`` (monotonic):
    its status, and the bytes sent."""
    conn = await Conn.open(ctx)
    sent = 0
    try:
        going = await conn.send(first)
        while going and time.monotonic() < until:
            going = await conn.send(chunk)
            sent += len(chunk) if going else 0
        return await conn.status(2.0), sent
    finally:
        conn.close()


async def flood_for(ctx: Ctx, connections: int, first: bytes, chunk: bytes) -> Outcome:
    """``connections`` clients, each streaming ``chunk`` after ``first`` for the header deadline, starting
    over on a new connection whenever the gateway closes one."""
    until = time.monotonic() + ctx.header_timeout
    statuses: Counter[str] = Counter()
    total = 0

    async def client() -> None:
        nonlocal total
        while time.monotonic() < until:
            status, sent = await stream_until_closed(ctx, first, chunk, until)
            statuses[status] += 1
            total += sent

    await asyncio.gather(*(client() for _ in range(connections)))
    plural = "s" if connections > 1 else ""
    # Written into the sockets: the kernel's buffers take a few MB a connection before a close is seen.
    return Outcome(statuses, f"{connections} connection{plural}, {total / MB:.0f} MB written")


async def trickle(ctx: Ctx, count: int, first: bytes, within: float) -> Outcome:
    """``count`` connections that send ``first`` and then a byte every half second until closed."""
    started = time.monotonic()
    closed_after: list[float] = []

    async def client() -> str:
        conn = await Conn.open(ctx)
        try:
            going = await conn.send(first)
            while going and time.monotonic() - started < within:
                await asyncio.wait([conn.answer], timeout=0.5)
                going = not conn.answer.done() and await conn.send(b"x")
            status = await conn.status(0.5)
            closed_after.append(time.monotonic() - started)
            return status
        finally:
            conn.close()

    statuses = Counter(await asyncio.gather(*(client() for _ in range(count))))
    return Outcome(statuses, f"{count} connections, the last closed after {max(closed_after):.1f} s")


def post(path: str, key: str, body: bytes, extra: bytes = b"") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n".encode()
        + b"Content-Type: application/json\r\nConnection: close\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


# ---- measuring ---------------------------------------------------------------------------------------------


def rss_mb(pid: int, field_name: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


class Peak:
    """The process's peak RSS while a probe runs: VmHWM after resetting it, and samples besides (the reset
    needs the process's owner; the samples miss a short peak)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.sampled = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as fh:
                fh.write("5")
            self.hwm = True
        except OSError:
            self.hwm = False

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(OSError):
                self.sampled = max(self.sampled, rss_mb(self.pid))

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def mb(self) -> float:
        return max(self.sampled, rss_mb(self.pid, "VmHWM") if self.hwm else 0.0)


async def health_watch(ctx: Ctx, stop: asyncio.Event) -> float:
    """The slowest GET /healthz answer (ms) while ``stop`` is unset, one every 50 ms on a kept-alive
    connection; a failed one counts as its wait."""
    slowest = 0.0
    conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    while not stop.is_set():
        started = time.monotonic()
        try:
            if conn is None:
                conn = await asyncio.open_connection(ctx.host, ctx.port)
            reader, writer = conn
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            async with asyncio.timeout(30):
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                )
                await reader.readexactly(length)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, StopIteration):
            if conn is not None:
                conn[1].close()
            conn = None
        slowest = max(slowest, (time.monotonic() - started) * 1000)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.05)
    if conn is not None:
        conn[1].close()
    return slowest
