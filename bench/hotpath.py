"""The gateway's own CPU time per request, in process: no sockets, no uvicorn, no HTTP client.

    python3 bench/hotpath.py                  # µs of CPU per non-streaming request, best of 5 rounds
    python3 bench/hotpath.py --profile 20     # cProfile of 20,000 requests, top entries by own time

The ASGI app is built by the real factory from a real configuration (an API key, two backends, the
default routing, limits, metrics and request log at the default level, logged to /dev/null) and called
directly with a chat request; the upstream client is an in-memory one that answers at once. What is
left is exactly the gateway's code: auth, limits, routing, the attempt loop, headers, telemetry. On this
shared 2-core machine, wall-clock load tests swing by ±30 % between identical runs; CPU time spent in
one process, best of several rounds, is steady enough to compare one change against another.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import logging
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from run import new_key  # noqa: E402  (bench/run.py, next to this file)

from gateway.app import create_app  # noqa: E402
from gateway.config import load_settings  # noqa: E402
from gateway.telemetry.logs import configure_logging  # noqa: E402
from gateway.upstream.base import Deadlines, UpstreamResponse  # noqa: E402
from gateway.upstream.settings import BackendSettings  # noqa: E402

ANSWER = orjson.dumps(
    {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hello there!"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 24, "total_tokens": 34},
    }
)
BODY = orjson.dumps(
    {
        "model": "auto",
        "messages": [{"role": "user", "content": "Hi! How was your weekend?"}],
        "max_tokens": 64,
    }
)


class _Answer(UpstreamResponse):
    __slots__ = ("_body",)

    def __init__(self, deadlines: Deadlines) -> None:
        super().__init__(200, [("content-type", "application/json")], deadlines)
        self._body = ANSWER

    async def _raw_chunk(self) -> bytes:
        body, self._body = self._body, b""
        return body

    async def read(self) -> bytes:
        self._ended = True
        return ANSWER

    async def _close(self, complete: bool) -> None:
        return None


class InMemoryUpstream:
    """An UpstreamClient that answers every request at once, without a socket."""

    async def send(
        self,
        backend: BackendSettings,
        path: str,
        *,
        method: str = "POST",
        body: bytes = b"",
        headers: list[tuple[str, str]],
        stream: bool,
    ) -> UpstreamResponse:
        loop = asyncio.get_running_loop()
        return _Answer(Deadlines.start(backend.timeouts, loop.time(), stream))

    async def get(self, backend: BackendSettings, path: str, *, within: float) -> tuple[int, bytes]:
        return 200, b""

    async def aclose(self) -> None:
        return None


def build(tmp: Path, **sections: Any) -> tuple[Callable[..., Awaitable[None]], str, Any]:
    """The gateway with an in-memory upstream; ``sections`` are more configuration (usage, telemetry)."""
    keys = tmp / "keys.yaml"
    key = new_key(keys)
    settings = load_settings(
        None,
        environ={},
        backends=[
            {"name": "diffusion", "kind": "diffusion", "url": "http://10.0.0.1:8000", "model": "dg"},
            {
                "name": "autoregressive",
                "kind": "autoregressive",
                "url": "http://10.0.0.2:8000",
                "model": "g4",
            },
        ],
        auth={"keys_file": str(keys)},
        **sections,
    )
    app = create_app(settings)
    upstream = InMemoryUpstream()
    app._gateway.upstream = upstream
    app._gateway.proxy._upstream = upstream
    return app, key, app._gateway


async def _drive(app: Callable[..., Awaitable[None]], key: str, count: int) -> float:
    headers = [
        (b"host", b"gateway"),
        (b"content-type", b"application/json"),
        (b"authorization", f"Bearer {key}".encode()),
        (b"content-length", str(len(BODY)).encode()),
    ]
    sent: list[int] = []
    never = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent.append(message["status"])

    start = time.process_time()
    for _ in range(count):
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": BODY, "more_body": False}
            await never.wait()
            return {"type": "http.disconnect"}

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/v1/chat/completions",
            "raw_path": b"/v1/chat/completions",
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8080),
        }
        await app(scope, receive, send)
    elapsed = time.process_time() - start
    if set(sent) != {200}:
        raise SystemExit(f"unexpected statuses: {sorted(set(sent))}")
    return elapsed / count


def _log_to_devnull() -> None:
    """The request log at its default level, written where it costs what a real stderr write costs."""
    configure_logging("info")
    devnull = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    logging.getLogger().handlers[0].setStream(devnull)  # type: ignore[attr-defined]


def measure(count: int = 5000, rounds: int = 5) -> dict[str, float]:
    """CPU µs per request: best and median of ``rounds`` rounds of ``count`` requests."""
    _log_to_devnull()
    with tempfile.TemporaryDirectory() as tmp:
        app, key, _ = build(Path(tmp))

        async def run() -> list[float]:
            await _drive(app, key, 500)  # warm-up: caches, first-use allocations
            return [await _drive(app, key, count) for _ in range(rounds)]

        per_request = sorted(asyncio.run(run()))
    return {
        "best_us": round(per_request[0] * 1e6, 1),
        "median_us": round(per_request[len(per_request) // 2] * 1e6, 1),
        "requests": count * rounds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--profile", type=int, metavar="THOUSANDS", help="cProfile this many thousand requests"
    )
    args = parser.parse_args()
    if args.profile:
        _log_to_devnull()
        with tempfile.TemporaryDirectory() as tmp:
            app, key, _ = build(Path(tmp))
            profiler = cProfile.Profile()
            profiler.enable()
            asyncio.run(_drive(app, key, args.profile * 1000))
            profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(35)
        return
    result = measure(args.count, args.rounds)
    print(
        f"gateway code per request (in process, no sockets): best {result['best_us']} µs, "
        f"median {result['median_us']} µs of CPU over {args.rounds} rounds of {args.count}"
    )


if __name__ == "__main__":
    main()
