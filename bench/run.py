"""The benchmark suite: the gateway side by side with the direct path, in one run, on this machine.

    python3 bench/run.py                 # full run (~10 minutes), table on stdout, JSON in bench/results/
    python3 bench/run.py --quick         # a short smoke run (CI)

Parts:
0. upstream clients: a minimal FastAPI proxy (bench/minimal_proxy.py, one uvicorn worker, uvloop +
   httptools) with each candidate client (httpx, httpx over aiohttp's transport, aiohttp, and the
   gateway's own httptools client) at concurrency 1, 16 and 64, with wrk: the numbers the gateway's
   upstream client was chosen by;
0b. event loops: a bare server spending a fixed CPU time per request (bench/loops.py) and the gateway
   itself, each on asyncio's loop and on uvloop, saturated at concurrency 64 (and the gateway at 16):
   requests/s, p99 and the slowest request, the numbers ``server.loop`` was chosen by;
1. overhead: non-streaming requests with wrk (Debian package) at concurrency 1, 16 and 64, straight to a
   zero-delay fake upstream (bench/fake_upstream.py) and through the gateway (one worker, an API key,
   the default log level): requests/s, p50 and p99, and the gateway's added latency;
2. streams of 256 chunks: time to first byte and to the last byte, direct and through the gateway;
3. the gateway's resident memory: idle, under load, and after 100,000 requests;
4. the routing decision time (bench/routing_bench.py's cases), and the gateway's own CPU per request in
   process (bench/hotpath.py);
5. realistic timings: the simulators with published H100 (and DGX Spark) figures, a mixed workload of real
   prompts (chat, code, tool calls from bench/data/routing_eval.jsonl) sent with routing, all to
   diffusion and all to autoregressive: mean and p95 end to end and the share per backend; and a burst
   above the diffusion backend's concurrency with spill-over on and off.

Over 400 lines on purpose: one script for the whole suite, its parts sharing one harness and one report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import aiohttp
import yaml

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

BODY = {
    "model": "auto",
    "messages": [{"role": "user", "content": "Hi! How was your weekend?"}],
    "max_tokens": 64,
}


# ---- processes --------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Process:
    def __init__(
        self,
        args: list[str],
        ready_url: str,
        env: dict[str, str] | None = None,
        cpus: set[int] | None = None,
        cwd: Path | None = None,
    ) -> None:
        # cpus: the cores the process may run on, set in the child before it execs, so every thread it
        # starts inherits them (edge.py --pin).
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        self.proc = subprocess.Popen(
            args,
            env={**os.environ, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=pin,  # only with cpus, set before any thread of the bench's own starts
            cwd=cwd,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(_addr(ready_url), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"{args} did not start")
        time.sleep(0.3)

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _addr(url: str) -> tuple[str, int]:
    host, port = url.split("//")[1].split("/")[0].split(":")
    return host, int(port)


def new_key(keys: Path) -> str:
    """A fresh API key in the key file ``keys``, made by the CLI as an operator would."""
    return subprocess.run(
        [sys.executable, "-m", "gateway", "keys", "create", "bench", "--keys-file", str(keys)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


DIFFUSION_MODEL = "nvidia/diffusiongemma-26B-A4B-it-NVFP4"


def two_backends(diffusion_url: str, ar_url: str, **diffusion: Any) -> list[dict[str, Any]]:
    """The backends section every benchmark puts behind the gateway; ``diffusion`` adds fields to the
    diffusion backend (``max_concurrency``: the fake upstream has no 4-sequence limit)."""
    return [
        {
            "name": "diffusion",
            "kind": "diffusion",
            "url": diffusion_url,
            "model": DIFFUSION_MODEL,
            **diffusion,
        },
        {
            "name": "autoregressive",
            "kind": "autoregressive",
            "url": ar_url,
            "model": "google/gemma-4-26B-A4B-it",
        },
    ]


def gateway(
    stack: ExitStack, tmp: Path, diffusion_url: str, ar_url: str, **sections: Any
) -> tuple[str, str, Process]:
    """A gateway process in front of the two URLs; ``diffusion={...}`` adds fields to that backend and
    ``server={...}`` to the server section; any other keyword is a configuration section."""
    port = free_port()
    keys = tmp / f"keys-{port}.yaml"
    key = new_key(keys)
    config = {
        "server": {"host": "127.0.0.1", "port": port, **sections.pop("server", {})},
        "backends": two_backends(diffusion_url, ar_url, **sections.pop("diffusion", {})),
        "auth": {"keys_file": str(keys)},
        # The usage ledger (on by default) in the run's temporary directory, not the working directory.
        "usage": {"url": f"sqlite:///{tmp / f'usage-{port}.db'}"},
        **sections,
    }
    path = tmp / f"gateway-{port}.yaml"
    path.write_text(yaml.safe_dump(config))
    url = f"http://127.0.0.1:{port}"
    proc = Process([sys.executable, "-m", "gateway", "serve", "--config", str(path)], url)
    stack.callback(proc.stop)
    return url, key, proc


# ---- 1. overhead with wrk ---------------------------------------------------------------------------------


def wrk(
    url: str,
    key: str,
    connections: int,
    seconds: float,
    tmp: Path,
    body: dict[str, Any] | None = None,
    cpus: set[int] | None = None,
) -> dict[str, float]:
    script = tmp / "post.lua"
    script.write_text(
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(json.dumps(body or BODY))}\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
        f'wrk.headers["Authorization"] = "Bearer {key}"\n'
    )
    threads = 1 if connections == 1 else 2
    out = subprocess.run(
        [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",  # wrk takes whole seconds
            "--latency",
            "-s",
            str(script),
            url + "/v1/chat/completions",
        ],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    latency = {q: _ms(re.search(rf"^\s+{q}%\s+([\d.]+\w+)", out, re.M).group(1)) for q in ("50", "99")}  # type: ignore[union-attr]
    slowest = _ms(re.search(r"^\s+Latency\s+\S+\s+\S+\s+([\d.]+\w+)", out, re.M).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": rps,
        "p50_ms": latency["50"],
        "p99_ms": latency["99"],
        "max_ms": slowest,
        "errors": float(non2xx.group(1)) if non2xx else 0.0,
    }


def _ms(value: str) -> float:
    number, unit = re.match(r"([\d.]+)(\w+)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


# ---- 0. upstream clients ----------------------------------------------------------------------------------


def clients(upstream: str, tmp: Path, seconds: float) -> dict[str, dict[int, dict[str, float]]]:
    from minimal_proxy import CLIENTS

    print("0. upstream clients: a minimal FastAPI proxy, one worker, zero-delay upstream (wrk: req/s, p99)")
    print(f"{'client':>14} " + " ".join(f"{'c' + str(c):>20}" for c in (1, 16, 64)))
    out: dict[str, dict[int, dict[str, float]]] = {}
    for name in CLIENTS:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = Process(
            [
                sys.executable,
                str(BENCH / "minimal_proxy.py"),
                "--client",
                name,
                "--port",
                str(port),
                "--upstream",
                upstream,
            ],
            url,
        )
        try:
            out[name] = {c: wrk(url, "unused", c, seconds, tmp) for c in (1, 16, 64)}
        finally:
            proc.stop()
        cells = " ".join(f"{r['rps']:>9.0f} {r['p99_ms']:>7.1f} ms" for r in out[name].values())
        print(f"{name:>14} {cells}")
    print()
    return out


# ---- 0b. event loops --------------------------------------------------------------------------------------


def loops(upstream: str, tmp: Path, seconds: float) -> dict[str, dict[str, dict[str, float]]]:
    print("0b. event loops, one saturated process (wrk: req/s, p99, slowest request)")
    print(f"{'loop':>8} {'bare server c64':>31} {'gateway c16':>31} {'gateway c64':>31}")
    out: dict[str, dict[str, dict[str, float]]] = {}
    for loop in ("asyncio", "uvloop"):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        bare = Process([sys.executable, str(BENCH / "loops.py"), "--loop", loop, "--port", str(port)], url)
        try:
            row = {"bare_c64": wrk(url, "unused", 64, seconds, tmp)}
        finally:
            bare.stop()
        with ExitStack() as stack:
            gw, key, _ = gateway(
                stack,
                tmp,
                upstream,
                upstream,
                server={"loop": loop},
                routing={"health_interval": 5},
                diffusion={"max_concurrency": 1024},
            )
            row["gateway_c16"] = wrk(gw, key, 16, seconds, tmp)
            row["gateway_c64"] = wrk(gw, key, 64, seconds, tmp)
        out[loop] = row
        cells = " ".join(
            f"{r['rps']:>9.0f} {r['p99_ms']:>7.1f} ms {r['max_ms']:>7.1f} ms" for r in row.values()
        )
        print(f"{loop:>8} {cells}")
    print()
    return out


# ---- 2. streams -------------------------------------------------------------------------------------------


async def streams(url: str, key: str, count: int) -> dict[str, float]:
    body = {**BODY, "stream": True}
    ttfb, total = [], []
    async with aiohttp.ClientSession() as session:
        for _ in range(count):
            start = time.perf_counter()
            async with session.post(
                url + "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}
            ) as r:
                first = None
                async for _chunk in r.content.iter_any():
                    if first is None:
                        first = time.perf_counter()
                end = time.perf_counter()
            ttfb.append((first or end) - start)
            total.append(end - start)
    return {"ttfb_ms": statistics.median(ttfb) * 1000, "last_byte_ms": statistics.median(total) * 1000}


# ---- 5. realistic timings ---------------------------------------------------------------------------------


def mixed_requests(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (BENCH / "data" / "routing_eval.jsonl").read_text().splitlines()]
    by_class: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_class.setdefault(row["class"], []).append(row)
    rng = random.Random(seed)
    # Mostly chat, as a bot's traffic is; some code, some tool calls.
    plan = ["chat"] * (count // 2) + ["code"] * (count // 4) + ["tools"] * (count - count // 2 - count // 4)
    rng.shuffle(plan)
    return [{**rng.choice(by_class[c])["request"], "max_tokens": 96} for c in plan]


async def workload(url: str, key: str, requests: list[dict[str, Any]], model: str, concurrency: int) -> dict:
    latencies: list[float] = []
    backends: dict[str, int] = {}
    gate = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session:

        async def one(body: dict[str, Any]) -> None:
            async with gate:
                start = time.perf_counter()
                async with session.post(
                    url + "/v1/chat/completions",
                    json={**body, "model": model},
                    headers={"authorization": f"Bearer {key}"},
                ) as r:
                    await r.read()
                    name = (
                        r.headers.get("x-gateway-backend", "none") if r.status == 200 else f"error {r.status}"
                    )
                latencies.append(time.perf_counter() - start)
                backends[name] = backends.get(name, 0) + 1

        await asyncio.gather(*(one(b) for b in requests))
    latencies.sort()
    n = len(latencies)
    return {
        "mean_s": round(statistics.fmean(latencies), 3),
        "p95_s": round(latencies[max(0, int(n * 0.95) - 1)], 3),
        "share": {k: round(v / n, 3) for k, v in sorted(backends.items())},
    }


# ---- the run ----------------------------------------------------------------------------------------------


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = int(Path("/proc/meminfo").read_text().split()[1]) // 1024 // 1024
    return (
        f"{os.cpu_count()} cores ({cpu}), {mem} GiB, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs, for CI")
    parser.add_argument("--json", default=str(BENCH / "results" / "latest.json"))
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    seconds = 2 if args.quick else 10
    results: dict[str, Any] = {"machine": machine(), "quick": args.quick, "date": time.strftime("%Y-%m-%d")}
    with tempfile.TemporaryDirectory() as tmpdir, ExitStack() as stack:
        tmp = Path(tmpdir)
        fake_port = free_port()
        fake = f"http://127.0.0.1:{fake_port}"
        upstream = Process([sys.executable, str(BENCH / "fake_upstream.py"), "--port", str(fake_port)], fake)
        stack.callback(upstream.stop)
        print(f"machine: {results['machine']}\n")
        results["clients"] = clients(fake, tmp, seconds)
        results["loops"] = loops(fake, tmp, seconds)

        # The fake upstream has no concurrency limit; the gateway is told so, or at concurrency 64 it would
        # hold requests for a 4-sequence diffusion backend (spill-over, measured in part 5), not relay them.
        gw, key, gw_proc = gateway(
            stack, tmp, fake, fake, routing={"health_interval": 5}, diffusion={"max_concurrency": 1024}
        )
        results["memory_mb"] = {"idle": round(gw_proc.rss_mb(), 1)}

        print("1. non-streaming requests, zero-delay upstream, one gateway worker (wrk)")
        print(
            f"{'conc':>4} {'direct rps':>11} {'gateway rps':>12} {'direct p50':>11} {'gw p50':>8} "
            f"{'direct p99':>11} {'gw p99':>8} {'added p50':>10} {'added p99':>10}"
        )
        overhead = {}
        for c in (1, 16, 64):
            direct = wrk(fake, key, c, seconds, tmp)
            through = wrk(gw, key, c, seconds, tmp)
            if c == 64:
                results["memory_mb"]["under_load"] = round(gw_proc.rss_mb(), 1)
            overhead[c] = {
                "direct": direct,
                "gateway": through,
                "added_p50_ms": round(through["p50_ms"] - direct["p50_ms"], 3),
                "added_p99_ms": round(through["p99_ms"] - direct["p99_ms"], 3),
            }
            print(
                f"{c:>4} {direct['rps']:>11.0f} {through['rps']:>12.0f} {direct['p50_ms']:>9.2f}ms "
                f"{through['p50_ms']:>6.2f}ms {direct['p99_ms']:>9.2f}ms {through['p99_ms']:>6.2f}ms "
                f"{overhead[c]['added_p50_ms']:>8.2f}ms {overhead[c]['added_p99_ms']:>8.2f}ms"
            )
        results["overhead"] = overhead

        count = 50 if args.quick else 200
        direct_s = asyncio.run(streams(fake, key, count))
        through_s = asyncio.run(streams(gw, key, count))
        results["streams"] = {"direct": direct_s, "gateway": through_s}
        print(f"\n2. streams of 256 chunks, median of {count}")
        print(
            f"   time to first byte: direct {direct_s['ttfb_ms']:.2f} ms, "
            f"gateway {through_s['ttfb_ms']:.2f} ms (+{through_s['ttfb_ms'] - direct_s['ttfb_ms']:.2f} ms)"
        )
        print(
            f"   last byte:          direct {direct_s['last_byte_ms']:.2f} ms, "
            f"gateway {through_s['last_byte_ms']:.2f} ms "
            f"(+{through_s['last_byte_ms'] - direct_s['last_byte_ms']:.2f} ms)"
        )

        total = 10_000 if args.quick else 100_000
        before = gw_proc.rss_mb()
        total = _drive(gw, key, total, overhead[16]["gateway"]["rps"], tmp)
        results["memory_mb"]["after_requests"] = {
            "requests": total,
            "before": round(before, 1),
            "after": round(gw_proc.rss_mb(), 1),
        }
        m = results["memory_mb"]
        print(
            f"\n3. gateway resident memory: idle {m['idle']:.0f} MB, "
            f"under load (c=64) {m['under_load']:.0f} MB, "
            f"{before:.0f} MB before and {m['after_requests']['after']:.0f} MB after {total:,} more requests"
        )

        from routing_bench import CASES, measure

        from gateway.routing.scorer.load import load_model

        scorer = load_model()  # as the gateway loads it: the decision includes the difficulty score
        results["routing_decision_us"] = {
            name: measure(payload, 200 if args.quick else 2000, scorer) for name, payload in CASES.items()
        }
        print(
            "\n4. routing decision (median / p99 µs): "
            + ", ".join(
                f"{k} {v['median_us']:.0f}/{v['p99_us']:.0f}"
                for k, v in results["routing_decision_us"].items()
            )
        )

        from hotpath import measure as own_cpu

        results["gateway_code_cpu_us"] = own_cpu(1000 if args.quick else 5000, 3 if args.quick else 5)
        print(
            "\n4b. the gateway's own code per request in process (bench/hotpath.py: no sockets, in-memory "
            f"upstream): {results['gateway_code_cpu_us']['best_us']:.0f} µs of CPU (best of rounds), "
            f"median {results['gateway_code_cpu_us']['median_us']:.0f} µs"
        )

        results["realistic"] = realistic(stack, tmp, args.quick)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"\nJSON written to {args.json}")


def _drive(url: str, key: str, total: int, rps: float, tmp: Path) -> int:
    """Send at least ``total`` requests with wrk at concurrency 16 (wrk has no request count: the run lasts
    long enough at the rate measured before). Returns the number wrk reports."""
    script = tmp / "post.lua"
    seconds = max(2, math.ceil(total / max(rps, 1.0) * 1.1))
    out = subprocess.run(
        ["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", str(script), url + "/v1/chat/completions"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]


def _row(profile: str, label: str, r: dict[str, Any]) -> str:
    times = f"mean {r['mean_s']:>6.2f} s  p95 {r['p95_s']:>6.2f} s"
    return f"   {profile:<9} {label:<21} {times}  share {r['share']}"


def realistic(stack: ExitStack, tmp: Path, quick: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    profiles = ["h100"] if quick else ["h100", "dgx-spark"]
    count = 16 if quick else 64
    print(
        f"\n5. realistic timings: simulators with published figures, {count} mixed real prompts "
        "(1/2 chat, 1/4 code, 1/4 tool calls), concurrency 8"
    )
    for profile in profiles:
        sims = {}
        for kind in ("diffusion", "autoregressive"):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            proc = Process(
                [
                    sys.executable,
                    "-m",
                    "gateway",
                    "simulate",
                    "--kind",
                    kind,
                    "--port",
                    str(port),
                    "--profile",
                    profile,
                ],
                url,
            )
            stack.callback(proc.stop)
            sims[kind] = url
        gw, key, _ = gateway(stack, tmp, sims["diffusion"], sims["autoregressive"])
        requests = mixed_requests(count)
        rows = {}
        for label, model in (
            ("routing", "auto"),
            ("all diffusion", "diffusion"),
            ("all autoregressive", "autoregressive"),
        ):
            rows[label] = asyncio.run(workload(gw, key, requests, model, 8))
            r = rows[label]
            print(_row(profile, label, r))
        burst = [
            {"messages": [{"role": "user", "content": f"Say hello to friend number {i}."}], "max_tokens": 96}
            for i in range(24)
        ]
        for label, mode in (("burst, spill-over on", "reroute"), ("burst, spill-over off", "off")):
            gw_b, key_b, _ = gateway(
                stack, tmp, sims["diffusion"], sims["autoregressive"], routing={"spillover": {"mode": mode}}
            )
            rows[label] = asyncio.run(workload(gw_b, key_b, burst, "auto", 24))
            r = rows[label]
            print(_row(profile, label, r))
        out[profile] = rows
    return out


if __name__ == "__main__":
    main()
