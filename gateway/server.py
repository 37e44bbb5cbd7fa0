"""Running ASGI apps under uvicorn on sockets we bind ourselves (so port 0 works and is known)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import socket
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from gateway.edge.protocol import EdgeProtocol
from gateway.edge.state import edge_of
from gateway.errors import ConfigError

__all__ = [
    "FULL_COLLECTION_EVERY",
    "YOUNG_COLLECTION_AFTER",
    "ListenError",
    "address",
    "bind",
    "collect_on_a_clock",
    "run",
    "serve",
    "serving_collections",
    "uvicorn_config",
]

# Seconds between two full garbage collections while serving (collect_on_a_clock).
FULL_COLLECTION_EVERY = 10.0
# A third-generation threshold the collector never reaches: full collections run on the clock only.
_NEVER = 2**31 - 1
# Young collections once this many more container objects are alive than at the last one (CPython's
# default is 700). A request keeps up to ~2,000 of them alive at its peak (JSON, headers, coroutines),
# so at CPython's threshold most requests start a young collection and promote their own live objects
# into the middle generation for it to trace again, a few percent of throughput. At 10,000, a request's
# peak never reaches it: young collections run about once per burst of new connections, each tracing
# about this many objects (under a millisecond).
# Cyclic garbage still waits at most FULL_COLLECTION_EVERY seconds.
YOUNG_COLLECTION_AFTER = 10_000


class ListenError(ConfigError):
    """A listening socket could not be had: one line with the address, the system's reason and the setting
    or option that chooses another, instead of a traceback ending in an errno."""


# The system's reasons a newcomer meets, in words that say what to do about them.
_BIND_REASONS = {
    errno.EADDRINUSE: "the port is already in use (another gateway, or another program, listens there)",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
    errno.EADDRNOTAVAIL: "the address is not one of this machine's",
}


def address(host: str, port: int) -> str:
    """``host:port`` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bind(host: str, port: int, *, hint: str = "") -> socket.socket:
    """A listening TCP socket on ``host:port``; :class:`ListenError` when the system refuses it, its
    message ending with ``hint`` (what the caller's user changes to choose another address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: asyncio and uvloop set TCP_NODELAY on accepted connections only when the listening
    # socket's proto is IPPROTO_TCP; with proto 0 every keep-alive response waits out the client's 40 ms
    # delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = _BIND_REASONS.get(exc.errno or 0) or exc.strerror or type(exc).__name__
        raise ListenError(
            f"cannot listen on {address(host, port)}: {reason}" + (f"; {hint}" if hint else "")
        ) from None
    sock.setblocking(False)
    return sock


def uvicorn_config(
    app: ASGIApp | str | Callable[[], ASGIApp],
    log_level: str = "info",
    *,
    keepalive_timeout: float | None = None,
    loop: str = "none",
    **workers: Any,
) -> uvicorn.Config:
    """The one uvicorn configuration, for an app in this process and for ``gateway serve --workers``.

    In this process ``app`` is the app itself, on the loop :func:`run` started (``loop="none"``), and the
    keep-alive timeout is read from its edge state. Workers get an app factory (picklable: it crosses to
    each worker process), their loop (``server.loop``), the keep-alive timeout from the settings, and
    ``factory``/``workers`` options.
    """
    if keepalive_timeout is None:
        edge = None if isinstance(app, str) else edge_of(app)
        keepalive_timeout = edge.settings.keepalive_timeout if edge is not None else 5
    return uvicorn.Config(
        app,
        lifespan="on",
        log_config=None,  # our JSON logging (telemetry.logs) is configured by the caller
        access_log=False,  # uvicorn's access line carries the query string; the request log replaces it
        log_level=log_level,
        loop=loop,  # "none": the loop is the one run() started (uvicorn's Server.serve never sets one up)
        # uvicorn's httptools protocol plus the edge's deadlines and connection cap (gateway/edge); on an
        # app without an edge (the simulator) it behaves as uvicorn's own.
        http=EdgeProtocol,
        # uvicorn annotates it int; it only ever reaches loop.call_later, which takes seconds as a float.
        timeout_keep_alive=keepalive_timeout,  # type: ignore[arg-type]
        server_header=False,
        date_header=True,
        timeout_graceful_shutdown=5,
        **workers,
    )


def run(main: Coroutine[Any, Any, None], loop: str = "asyncio") -> None:
    """Run the servers on asyncio's event loop, or on uvloop (``server.loop``)."""
    if loop == "uvloop":
        import uvloop

        uvloop.run(main)
    else:
        asyncio.run(main)


async def serve(
    apps: Sequence[tuple[ASGIApp, socket.socket | list[socket.socket]]], log_level: str = "info"
) -> None:
    """Serve every app on its socket(s) until interrupted; stopping one stops them all. An app on
    several sockets (the gateway and its operator listener) is one server: one lifespan."""
    servers = [uvicorn.Server(uvicorn_config(app, log_level)) for app, _ in apps]
    with serving_collections():
        tasks = [
            asyncio.create_task(srv.serve(sockets=sock if isinstance(sock, list) else [sock]))
            for srv, (_, sock) in zip(servers, apps, strict=True)
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for srv in servers:
                srv.should_exit = True
            await asyncio.gather(*tasks, return_exceptions=True)


@contextlib.contextmanager
def serving_collections() -> Iterator[None]:
    """The garbage collector as a serving process wants it, while inside: what was built so far frozen,
    and full collections on a clock (:func:`collect_on_a_clock`). ``serve`` enters it for one process;
    a ``gateway serve --workers`` worker's app enters it in its lifespan (uvicorn starts workers without
    ``serve``).

    Everything built before serving (settings, apps, imported modules: ~65,000 objects) lives as long as
    the process. Frozen, it is left out of the cyclic garbage collector's full passes, which otherwise stop
    the event loop for tens of ms each under load and make most of the p99 at high concurrency
    (docs/performance.md); the start-up garbage is collected first so it is not kept.
    """
    gc.collect()
    gc.freeze()
    with collect_on_a_clock(FULL_COLLECTION_EVERY):
        yield


@contextlib.contextmanager
def collect_on_a_clock(every: float, young_after: int = YOUNG_COLLECTION_AFTER) -> Iterator[None]:
    """Full garbage collections every ``every`` seconds instead of on allocation counts, while inside.

    CPython starts a full collection after ten young ones (once a quarter more objects have survived
    into the old generation since the last), so its rate follows the allocation rate of the traffic,
    while its cost follows everything alive: every open connection's objects (about 35 each, uvicorn's
    protocol, parser, transport and their bound methods): beside thousands of slow clients a pass takes
    tens of ms and runs every second or two under normal traffic, a few percent of a core. On a clock the cost
    is bounded by the interval whatever the traffic. The young generations still run on counts, from
    ``young_after`` objects (above a request's peak),
    so short-lived cyclic garbage is collected by them or, at the latest, by the clock's pass: whatever
    the counts, no cyclic garbage (and no buffer it holds) outlives ``every`` seconds.
    """
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, young_after), middle, _NEVER)
    loop = asyncio.get_running_loop()
    timer: asyncio.TimerHandle | None = None

    def collect() -> None:
        nonlocal timer
        gc.collect()
        timer = loop.call_later(every, collect)

    timer = loop.call_later(every, collect)
    try:
        yield
    finally:
        timer.cancel()
        gc.set_threshold(young, middle, old)
