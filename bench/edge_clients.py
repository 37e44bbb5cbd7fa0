"""The abusive clients of bench/edge.py's part B: slow heads, slow bodies and never-read streams.

Held open in one asyncio process that shares the two cores with the gateway, so they cost little CPU
themselves: bare protocols, the gateway's close taken as an event, one ``/proc/net/tcp`` read every 0.5 s
for all the never-read streams (:class:`LetGo`). :func:`abuse` holds them while normal traffic runs in a
thread; :func:`limited_key` gives them a capped key of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from run import BODY

__all__ = ["LetGo", "SlowClients", "abuse", "limited_key", "wait_for_key"]


class LetGo:
    """Tells each never-reading client when the gateway has let go of its connection. Such a client
    cannot see the gateway close: the FIN waits behind the unread bytes. What counts is that the gateway
    closed its descriptor (the kernel then lists the server side with inode 0, or not at all) or reset
    the connection (the client side is no longer ESTABLISHED). One read of /proc/net/tcp per period for
    all of them: a poll per connection cost the slow-client process more CPU than the gateway spent on
    the connections it was measuring."""

    def __init__(self, port: int, period: float = 0.5) -> None:
        self.port, self.period = port, period
        self._watched: dict[int, asyncio.Future[None]] = {}  # by client port
        self._seen: set[int] = set()  # client ports the gateway has held (before it accepts, it holds none)

    def watch(self, sock: socket.socket) -> asyncio.Future[None]:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._watched[sock.getsockname()[1]] = done
        return done

    def forget(self, sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            client = sock.getsockname()[1]
            self._watched.pop(client, None)
            self._seen.discard(client)

    def _connections(self) -> tuple[set[int], set[int]]:
        """Client ports the gateway holds a descriptor for, and those whose client side is ESTABLISHED
        (procfs: read from memory, no disk to wait for)."""
        server = f":{self.port:04X}"
        held: set[int] = set()
        established: set[int] = set()
        with open("/proc/net/tcp") as fh:
            next(fh)
            for line in fh:
                _, local, remote, state, _, _, _, _, _, inode, _ = line.split(maxsplit=10)
                if local.endswith(server):
                    if inode != "0":
                        held.add(int(remote[-4:], 16))
                elif remote.endswith(server) and state == "01":
                    established.add(int(local[-4:], 16))
        return held, established

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.period)
            if not self._watched:
                continue
            held, established = self._connections()
            for client, done in list(self._watched.items()):
                if client not in established or (client in self._seen and client not in held):
                    del self._watched[client]
                    if not done.done():
                        done.set_result(None)
                elif client in held:
                    self._seen.add(client)


class _SlowClient(asyncio.Protocol):
    """One slow client on a bare protocol (the cheapest a Python client can be): sends ``request``, then
    one more byte every ``trickle`` seconds until the gateway closes the connection; ``None``: sends
    nothing more and reads nothing (a never-reading stream)."""

    def __init__(self, request: bytes, trickle: float | None) -> None:
        self.request, self.trickle = request, trickle
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._tick: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)
        if self.trickle is None:
            transport.pause_reading()
        else:
            self._tick = asyncio.get_running_loop().call_later(self.trickle, self._more)

    def _more(self) -> None:
        self.transport.write(b"x")  # never completes a head line or the body
        self._tick = asyncio.get_running_loop().call_later(self.trickle or 0.0, self._more)

    def data_received(self, data: bytes) -> None:
        pass  # the 408

    def connection_lost(self, exc: Exception | None) -> None:
        if self._tick is not None:
            self._tick.cancel()
        if not self.closed.done():
            self.closed.set_result(None)


class SlowClients:
    """``n`` slow connections held open for ``seconds``, each replaced when the gateway closes it; every
    connection's lifetime is recorded against the deadline it should have met.

    They behave as attackers do (slowloris), and cost this process little CPU, which shares the cores
    with the gateway: a partial head or body, then one more byte every ``trickle`` seconds (which must
    not keep the connection: the deadlines are absolute), the gateway's close an event (no polling);
    never-reading streams are watched by :class:`LetGo`."""

    def __init__(
        self, port: int, key: str, n: int, edge: dict[str, Any], kinds: list[str], trickle: float = 2.0
    ) -> None:
        self.port, self.key, self.n, self.edge, self.kinds = port, key, n, edge, kinds
        self.trickle = trickle
        self.closed: dict[str, list[float]] = {"head": [], "body": [], "unread_stream": []}
        self.still_open: dict[str, int] = {}
        self.failed_connects = 0
        self.let_go = LetGo(port)

    def deadline(self, kind: str) -> float:
        e = self.edge
        if kind == "head":
            return float(e["header_timeout"])
        if kind == "body":
            return float(e["body_timeout"])
        # A stream nobody reads: closed by the send deadline if its answer fills the socket buffers, else
        # by the keep-alive timeout once the answer has gone into them.
        return float(max(e["send_timeout"], e["keepalive_timeout"]))

    def _request(self, kind: str) -> bytes:
        if kind == "head":
            return b"POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nAuthoriz"
        if kind == "body":
            return (
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
                + f"Authorization: Bearer {self.key}\r\nContent-Length: 1000\r\n\r\n".encode()
                + b'{"model": '
            )
        body = json.dumps({**BODY, "stream": True}).encode()
        return (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {self.key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    async def _one(self, kind: str) -> None:
        loop = asyncio.get_running_loop()
        request = self._request(kind)
        trickle = None if kind == "unread_stream" else self.trickle
        while True:
            sock = socket.socket()
            sock.setblocking(False)
            if kind == "unread_stream":
                # A small receive window, as a client far away that reads nothing: the answer stays in
                # the gateway's buffers instead of loopback's multi-megabyte kernel ones.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            try:
                await loop.sock_connect(sock, ("127.0.0.1", self.port))
                started = time.monotonic()
                transport, client = await loop.create_connection(
                    lambda: _SlowClient(request, trickle), sock=sock
                )
            except OSError:
                sock.close()
                self.failed_connects += 1
                await asyncio.sleep(0.1)
                continue
            try:
                await (self.let_go.watch(sock) if kind == "unread_stream" else client.closed)
                self.closed[kind].append(time.monotonic() - started)
            except asyncio.CancelledError:
                self.still_open[kind] = self.still_open.get(kind, 0) + 1
                raise
            finally:
                self.let_go.forget(sock)
                transport.abort()  # a reset: no TIME_WAIT left behind on this side

    async def hold(self, seconds: float) -> None:
        kinds = [self.kinds[i % len(self.kinds)] for i in range(self.n)]
        watcher = asyncio.create_task(self.let_go.run())
        tasks = []
        for i, kind in enumerate(kinds):
            tasks.append(asyncio.create_task(self._one(kind)))
            if i % 100 == 99:
                await asyncio.sleep(0.05)  # connect in batches: a burst of 2,000 SYNs overflows the backlog
        await asyncio.sleep(seconds)
        for task in [*tasks, watcher]:
            task.cancel()
        await asyncio.gather(*tasks, watcher, return_exceptions=True)

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind, lifetimes in self.closed.items():
            bound = self.deadline(kind) + 1.0
            out[kind] = {
                "closed": len(lifetimes),
                "deadline_s": self.deadline(kind),
                "max_lifetime_s": round(max(lifetimes), 2) if lifetimes else None,
                "within_deadline_plus_1s": sum(1 for t in lifetimes if t <= bound),
                "open_at_end": self.still_open.get(kind, 0),  # opened less than a deadline before the end
            }
        out["failed_connects"] = self.failed_connects
        return out


def limited_key(tmp: Path, url: str, concurrency: int, rpm: int) -> str:
    """A second key with caps (requests in flight, requests a minute), as an operator gives a client it
    does not trust: the slow clients' own, so that their never-read streams meet the caps and not the
    normal traffic's key. The gateway reloads its key file, so the key works within that interval."""
    keys = tmp / f"keys-{url.rsplit(':', 1)[1]}.yaml"
    made = subprocess.run(
        [
            *(sys.executable, "-m", "gateway", "keys", "create", "untrusted"),
            *("--keys-file", str(keys)),
            *(("--concurrency", str(concurrency)) if concurrency else ()),
            *(("--rpm", str(rpm)) if rpm else ()),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


def wait_for_key(url: str, key: str, seconds: float = 30.0) -> None:
    """Until the gateway has read the new key from its file (it reloads it on an interval)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            answer = httpx.get(f"{url}/v1/models", headers={"authorization": f"Bearer {key}"})
            if answer.status_code == 200:
                return
        time.sleep(0.5)
    raise SystemExit(f"the gateway did not take the new key within {seconds:g} s")


def abuse(
    port: int,
    key: str,
    n: int,
    edge: dict[str, Any],
    kinds: list[str],
    seconds: float,
    run_load: Any,
    trickle: float,
) -> tuple[Any, Any]:
    """Hold ``n`` slow clients for ``seconds`` while ``run_load()`` (normal traffic) runs in a thread."""
    clients = SlowClients(port, key, n, edge, kinds, trickle)
    result: dict[str, Any] = {}

    def load() -> None:
        time.sleep(2.0)  # once the slow clients are connected
        result["load"] = run_load()

    thread = threading.Thread(target=load)
    thread.start()
    asyncio.run(clients.hold(seconds))
    thread.join()
    return result["load"], clients.report()
