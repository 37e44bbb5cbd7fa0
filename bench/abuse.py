"""Abuse probes against one gateway on loopback: run by hand before a release.

    python3 bench/abuse.py                  # every probe, about two minutes; JSON in bench/results/abuse.json
    python3 bench/abuse.py --quick          # short deadlines and small counts (tests/test_bench_smoke.py)
    python3 bench/abuse.py --probes header_flood,gzip_layers
    python3 bench/abuse.py --list           # the probes, one a line

Everything runs on 127.0.0.1: a zero-delay fake upstream (bench/fake_upstream.py) and ``gateway serve`` in
subprocesses (bench/run.py's), the abusive clients in this process. Every probe is bounded in time and in
count. For each the report gives what the gateway answered (status counts), how long the probe ran, the
gateway process's RSS before it, at its peak (VmHWM, reset before each probe through
/proc/<pid>/clear_refs, or sampled where that is not allowed) and after it, and the slowest /healthz answer
while it ran: a stalled event loop shows there, for every client at once.

The probes are a table, ``PROBES``: name -> what it sends, the coroutine, and an optional bound on RSS
growth checked in the report. A new probe is an ``async def probe(ctx: Ctx) -> Outcome`` and a line there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import aiohttp

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from abuse_clients import (  # noqa: E402
    MB,
    Ctx,
    Outcome,
    Peak,
    exchange,
    flood_for,
    health_watch,
    post,
    rss_mb,
    status_of,
    trickle,
)
from run import Process, free_port, gateway, machine  # noqa: E402

CHAT = b'{"model": "google/gemma-4-26B-A4B-it", "messages": [{"role": "user", "content": "Hello"}]}'


# ---- the probes --------------------------------------------------------------------------------------------


async def header_flood(ctx: Ctx) -> Outcome:
    lines = b"".join(b"X-H%d: v\r\n" % i for i in range(4096))
    return await flood_for(ctx, 2, b"POST /v1/chat/completions HTTP/1.1\r\n", lines)


async def endless_value(ctx: Ctx) -> Outcome:
    first = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Endless: "
    return await flood_for(ctx, 1, first, b"v" * 65536)


async def many_headers(ctx: Ctx) -> Outcome:
    head = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(5000))
    count = ctx.n(50, 5)
    answers = await asyncio.gather(*(exchange(ctx, head + b"\r\n") for _ in range(count)))
    return Outcome(Counter(map(status_of, answers)), f"{count} requests of 5,000 header fields")


async def trailer_authorization(ctx: Ctx) -> Outcome:
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + b"%x\r\n" % len(CHAT)
        + CHAT
        + f"\r\n0\r\nAuthorization: Bearer {ctx.key}\r\nx-gateway-route: diffusion\r\n\r\n".encode()
    )
    answer = await exchange(ctx, request)
    return Outcome(Counter([status_of(answer)]), "a valid key in the trailer section only (401 expected)")


def layered(ctx: Ctx) -> None:
    """A chat body about 7 MB long (64 kB quick) in 1,000 stored (level 0) gzip layers."""
    size = ctx.n(6_500_000, 60_000)
    body = b'{"model": "auto", "messages": [{"role": "user", "content": "' + b"a" * size + b'"}]}'
    for _ in range(1000):
        body = gzip.compress(body, compresslevel=0)
    ctx.cache["layers"] = body


async def gzip_layers(ctx: Ctx, path: str = "/v1/chat/completions") -> Outcome:
    body = ctx.cache["layers"]
    # One header line (the codings, 6 kB): a thousand lines would be refused at the head's bounds first.
    codings = b"Content-Encoding: " + b", ".join([b"gzip"] * 1000) + b"\r\n"
    answer = await exchange(ctx, post(path, ctx.key, body, codings), 60)
    return Outcome(Counter([status_of(answer)]), f"{len(body) / MB:.1f} MB in 1,000 gzip layers, {path}")


async def gzip_layers_dry_run(ctx: Ctx) -> Outcome:
    return await gzip_layers(ctx, "/v1/gateway/route")


def bomb(ctx: Ctx) -> None:
    """64 MB of JSON in two gzip layers (tens of kB)."""
    plain = b'{"model": "auto", "messages": [{"role": "user", "content": "' + b"a" * (64 * MB) + b'"}]}'
    ctx.cache["bomb"] = gzip.compress(gzip.compress(plain, 9), 9)


async def gzip_bomb(ctx: Ctx) -> Outcome:
    body = ctx.cache["bomb"]
    request = post("/v1/chat/completions", ctx.key, body, b"Content-Encoding: gzip, gzip\r\n")
    answer = await exchange(ctx, request)
    return Outcome(Counter([status_of(answer)]), f"{len(body)} bytes decoding to 64 MB, two layers")


async def slowloris(ctx: Ctx) -> Outcome:
    first = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: "
    return await trickle(ctx, ctx.n(200, 10), first, ctx.header_timeout + 5)


async def body_trickle(ctx: Ctx) -> Outcome:
    head = post("/v1/chat/completions", ctx.key, b"")
    head = head.replace(b"Content-Length: 0", b"Content-Length: 1000")
    return await trickle(ctx, ctx.n(200, 10), head, ctx.body_timeout + 5)


def ledger_rows(ctx: Ctx) -> int | None:
    try:
        with contextlib.closing(sqlite3.connect(ctx.ledger)) as db:
            return int(db.execute("SELECT count(*) FROM usage_records").fetchone()[0])
    except sqlite3.Error:
        return None


async def flood_401(ctx: Ctx) -> Outcome:
    count = ctx.n(2000, 50)
    before = ledger_rows(ctx)
    statuses: Counter[str] = Counter()
    url = f"http://{ctx.host}:{ctx.port}/v1/chat/completions"
    async with aiohttp.ClientSession() as session:

        async def worker(offset: int) -> None:
            for i in range(offset, count, 16):
                headers = {"authorization": f"Bearer sk-wrong-{i}", "content-type": "application/json"}
                async with session.post(url, data=CHAT, headers=headers) as response:
                    await response.read()
                    statuses[str(response.status)] += 1

        await asyncio.gather(*(worker(i) for i in range(16)))
    await asyncio.sleep(2.5)  # the ledger writes every second (usage.flush_interval)
    after = ledger_rows(ctx)
    rows = "ledger off" if before is None or after is None else f"ledger rows {before} -> {after}"
    return Outcome(statuses, f"{count} requests with wrong keys; {rows}")


async def deep_json(ctx: Ctx) -> Outcome:
    statuses: Counter[str] = Counter()
    for depth in (1000, 100_000):
        content = b"[" * depth + b"]" * depth
        body = b'{"model": "auto", "messages": [{"role": "user", "content": ' + content + b"}]}"
        answer = await exchange(ctx, post("/v1/chat/completions", ctx.key, body))
        statuses[f"depth {depth}: {status_of(answer)}"] += 1
    return Outcome(statuses, "nested arrays as a message's content")


async def unknown_route_header(ctx: Ctx) -> Outcome:
    request = post("/v1/chat/completions", ctx.key, CHAT, b"x-gateway-route: no-such-backend\r\n")
    return Outcome(Counter([status_of(await exchange(ctx, request))]), "x-gateway-route names no backend")


Probe = Callable[[Ctx], Awaitable[Outcome]]
# name -> (what it sends, the probe, the most RSS may grow in MB, if a target says so)
PROBES: dict[str, tuple[str, Probe, float | None]] = {
    "header_flood": ("2 connections streaming header lines for the header deadline", header_flood, 10.0),
    "endless_value": ("1 connection, one endless header value for the header deadline", endless_value, 10.0),
    "many_headers": ("requests of 5,000 small header fields each", many_headers, None),
    "trailer_authorization": ("a chunked body, the key in its trailer fields", trailer_authorization, None),
    "gzip_layers": ("7 MB in 1,000 stored gzip layers, to the proxy", gzip_layers, None),
    "gzip_layers_dry_run": ("the same to the dry run, POST /v1/gateway/route", gzip_layers_dry_run, None),
    "gzip_bomb": ("two gzip layers decoding past the body limit", gzip_bomb, None),
    "slowloris": ("connections sending their head a byte every 0.5 s", slowloris, None),
    "body_trickle": ("connections sending their body a byte every 0.5 s", body_trickle, None),
    "flood_401": ("requests with wrong keys, 16 at a time", flood_401, None),
    "deep_json": ("bodies nested 1,000 and 100,000 arrays deep", deep_json, None),
    "unknown_route_header": ("a route header naming no backend", unknown_route_header, None),
}
# Payloads built before their probe is measured (the building would stall this process's health checks).
PREPARE: dict[str, Callable[[Ctx], None]] = {
    "gzip_layers": layered,
    "gzip_layers_dry_run": layered,
    "gzip_bomb": bomb,
}


async def measure(ctx: Ctx, pid: int, name: str) -> dict[str, Any]:
    _, probe, growth = PROBES[name]
    await asyncio.sleep(0.5)  # the previous probe's connections closed
    before = rss_mb(pid)
    stop = asyncio.Event()
    watch = asyncio.create_task(health_watch(ctx, stop))
    started = time.monotonic()
    with Peak(pid) as peak:
        outcome = await probe(ctx)
        seconds = time.monotonic() - started
        stop.set()
        health_ms = await watch
        await asyncio.sleep(0.5)
    row = {
        "statuses": dict(outcome.statuses),
        "seconds": round(seconds, 2),
        "rss_mb": {"before": round(before, 1), "peak": round(peak.mb(), 1), "after": round(rss_mb(pid), 1)},
        "health_max_ms": round(health_ms, 1),
        "detail": outcome.detail,
    }
    if growth is not None:
        row["target"] = {"rss_growth_mb": growth, "met": peak.mb() - before <= growth}
    return row


def line(name: str, row: dict[str, Any]) -> str:
    statuses = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(row["statuses"].items()))
    rss = row["rss_mb"]
    target = row.get("target")
    mark = (
        "" if target is None else f" [≤{target['rss_growth_mb']:.0f} MB: {'ok' if target['met'] else 'OVER'}]"
    )
    return (
        f"{name:<22} {statuses:<34} {row['seconds']:>7.1f} {rss['before']:>7.1f} {rss['peak']:>7.1f} "
        f"{rss['after']:>7.1f} {row['health_max_ms']:>9.0f}  {row['detail']}{mark}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short deadlines and small counts")
    parser.add_argument("--probes", default=",".join(PROBES), help="comma-separated, from --list")
    parser.add_argument("--list", action="store_true", help="print the probes and exit")
    parser.add_argument("--json", default=str(BENCH / "results" / "abuse.json"))
    args = parser.parse_args()
    if args.list:
        for name, (what, _, _) in PROBES.items():
            print(f"{name}: {what}")
        return
    names = [n.strip() for n in args.probes.split(",") if n.strip()]
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        sys.exit(f"unknown probes: {', '.join(unknown)} (see --list)")
    edge = (
        {"header_timeout": 1.0, "body_timeout": 1.5}
        if args.quick
        else {"header_timeout": 10.0, "body_timeout": 10.0}
    )
    results: dict[str, Any] = {"machine": machine(), "quick": args.quick, "edge": edge, "probes": {}}
    with tempfile.TemporaryDirectory() as tmpdir, ExitStack() as stack:
        tmp = Path(tmpdir)
        fake_port = free_port()
        fake = f"http://127.0.0.1:{fake_port}"
        upstream = Process([sys.executable, str(BENCH / "fake_upstream.py"), "--port", str(fake_port)], fake)
        stack.callback(upstream.stop)
        url, key, proc = gateway(
            stack, tmp, fake, fake, server={"log_level": "error"}, routing={"health_interval": 5}, edge=edge
        )
        port = int(url.rsplit(":", 1)[1])
        ctx = Ctx(
            "127.0.0.1",
            port,
            key,
            args.quick,
            edge["header_timeout"],
            edge["body_timeout"],
            tmp / f"usage-{port}.db",
        )
        print(f"machine: {results['machine']}\nedge: {edge}\n")
        print(
            f"{'probe':<22} {'status':<34} {'time s':>7} {'RSS MB':>7} {'peak':>7} {'after':>7} "
            f"{'health ms':>9}  detail"
        )
        for name in names:
            prepare = PREPARE.get(name)
            if prepare is not None:
                prepare(ctx)
            row = asyncio.run(measure(ctx, proc.proc.pid, name))
            results["probes"][name] = row
            print(line(name, row), flush=True)
            if proc.proc.poll() is not None:
                sys.exit(f"the gateway exited during {name}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nJSON: {args.json}")


if __name__ == "__main__":
    main()
