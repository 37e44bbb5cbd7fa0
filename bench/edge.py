"""Soak and abuse benchmark for the gateway's edge, and one worker against two.

    python3 bench/edge.py              # full run (about 20 minutes), JSON in bench/results/edge.json
    python3 bench/edge.py --quick      # a short smoke run (a minute)
    python3 bench/edge.py --parts E    # one part (here: the CPU one slow connection costs)
    python3 bench/edge.py --parts B --pin   # the gateway alone on one core, the clients on the rest

Everything runs on 127.0.0.1: a zero-delay fake upstream (bench/fake_upstream.py), ``gateway serve`` in
a subprocess, wrk (Debian package) for normal traffic, and the abusive clients in this process.

A. normal traffic alone: wrk at concurrency 16, non-streaming requests: requests/s, p50, p99;
B. the same while N slow clients are held open, each replaced as soon as the gateway closes it, in two
   mixes: half request heads and partial bodies (headers and 10 of 1,000 body bytes); and those plus
   streaming requests whose answers are never read: normal traffic's requests/s, p99 and the gateway's
   CPU per request against A, how long after its deadline each slow connection was closed, and open
   connections and RSS sampled twice a second. Measured in pairs of wrk windows (``--window``, 30 s:
   six of the never-read streams' waves, which come every keep-alive timeout), one alone and one beside
   the slow clients, ``--repeat`` times (3) per mix: each pair's ratio, their median and spread;
C. soak: R mixed requests at concurrency 32 (answers, streams read to the end, streams dropped after
   the first event, and 400, 401 and 415 errors): RSS and open descriptors after a warm-up and after;
D. workers: ``gateway serve --workers 1`` and ``--workers 2`` side by side with wrk at concurrency 16
   and 64: requests/s, p50, p99;
E. the gateway's CPU per slow connection, with nothing else running against it: N connections that send
   half a request head, from accept to the 408 and the close (``header_timeout`` 1 s).

The edge settings used are printed with the results; the deadlines are shorter than the defaults so the
run is short, and the targets scale with them (closed within its deadline + 1 s).

Over 400 lines on purpose: one script for the edge suite's five parts sharing one report (the abusive clients
are in bench/edge_clients.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import aiohttp
import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from edge_clients import abuse, limited_key, wait_for_key  # noqa: E402
from run import BODY, Process, free_port, new_key, two_backends, wrk  # noqa: E402

# ---- the gateway under test -------------------------------------------------------------------------------


def edge_settings(quick: bool, n_slow: int) -> dict[str, Any]:
    """The gateway's edge settings for a run: deadlines shorter than the defaults so the run is short (the
    targets scale with them), and room for the slow clients under the connection cap."""
    edge: dict[str, Any] = (
        {"header_timeout": 1.0, "body_timeout": 1.5, "keepalive_timeout": 1.0, "send_timeout": 1.5}
        if quick
        else {"header_timeout": 10.0, "body_timeout": 20.0, "keepalive_timeout": 5.0, "send_timeout": 20.0}
    )
    edge["max_connections"] = n_slow + 512
    return edge


def start_gateway(
    stack: ExitStack,
    tmp: Path,
    upstream: str,
    edge: dict[str, Any],
    workers: int = 1,
    cpus: set[int] | None = None,
    loop: str = "asyncio",
) -> tuple[str, str, str, Process]:
    """``gateway serve`` with an operator listener (metrics while the main one is busy); returns the
    main URL, the operator URL, a key, and the process. The key file is ``keys-<port>.yaml`` in ``tmp``
    (``limited_key`` adds another key to it)."""
    port, operator = free_port(), free_port()
    keys = tmp / f"keys-{port}.yaml"
    key = new_key(keys)
    config = {
        "server": {"host": "127.0.0.1", "port": port, "log_level": "warning", "loop": loop},
        "backends": two_backends(upstream, upstream, max_concurrency=4096),
        "auth": {"keys_file": str(keys)},
        "routing": {"health_interval": 5},
        "telemetry": {"scrape_backends": False},
        "edge": {**edge, "operator_port": operator},
        # The usage ledger on, as by default, but in the run's own folder (its default, usage.db in the
        # working directory, would be left behind: 12 MB after part B).
        "usage": {"url": f"sqlite:///{tmp / f'usage-{port}.db'}"},
    }
    path = tmp / f"gateway-{port}.yaml"
    path.write_text(yaml.safe_dump(config))
    url = f"http://127.0.0.1:{port}"
    proc = Process(
        [sys.executable, "-m", "gateway", "serve", "--config", str(path), "--workers", str(workers)],
        url,
        cpus=cpus,
    )
    stack.callback(proc.stop)
    return url, f"http://127.0.0.1:{operator}", key, proc


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    """User + system CPU the process (or one of its threads) has used: unlike requests/s, not skewed by
    what else the shared cores run, so the cost of slow clients to the gateway itself is this per request."""
    path = f"/proc/{pid}/task/{tid}/stat" if tid is not None else f"/proc/{pid}/stat"
    with open(path) as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> tuple[float, float]:
    """Busy and idle CPU seconds of the whole machine so far (all cores, /proc/stat; steal counts busy)."""
    with open("/proc/stat") as fh:
        ticks = [int(x) for x in fh.readline().split()[1:9]]
    idle = ticks[3] + ticks[4]
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK"), idle / os.sysconf("SC_CLK_TCK")


class CpuMeters:
    """Where the two shared cores go while normal traffic is measured: the gateway, the fake upstream,
    wrk, the slow clients (this process's main thread, which runs them) and everything else on the
    machine (other sessions). CPU seconds, so the split does not depend on how busy the machine was."""

    def __init__(self, gateway_pid: int, upstream_pid: int) -> None:
        self.gateway_pid, self.upstream_pid = gateway_pid, upstream_pid

    def _read(self) -> dict[str, float]:
        busy, idle = machine_cpu()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)  # wrk, once it has been waited for
        return {
            "gateway": cpu_seconds(self.gateway_pid),
            "upstream": cpu_seconds(self.upstream_pid),
            "wrk": children.ru_utime + children.ru_stime,
            "slow_clients": cpu_seconds(os.getpid(), threading.main_thread().native_id),
            "machine_busy": busy,
            "machine_idle": idle,
        }

    def measured(self, run: Any) -> dict[str, Any]:
        """wrk's figures plus the gateway's CPU per request and the cores' split over the same window."""
        before, began = self._read(), time.monotonic()
        result: dict[str, Any] = run()
        after, took = self._read(), time.monotonic() - began
        used = {name: after[name] - before[name] for name in before}
        done = result["rps"] * result["seconds"]
        result["gateway_cpu_s"] = round(used["gateway"], 2)
        result["cpu_us_per_request"] = round(used["gateway"] / done * 1e6, 1) if done else 0.0
        ours = sum(used[name] for name in ("gateway", "upstream", "wrk", "slow_clients"))
        cores = {name: used[name] / took for name in ("gateway", "upstream", "wrk", "slow_clients")}
        cores["others"] = max(0.0, used["machine_busy"] - ours) / took
        cores["idle"] = used["machine_idle"] / took
        result["cores"] = {name: round(value, 3) for name, value in cores.items()}
        return result


def cores_line(cores: dict[str, float]) -> str:
    return ", ".join(f"{name.replace('_', ' ')} {value:.2f}" for name, value in cores.items())


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def open_connections(operator: str) -> float:
    import urllib.request

    with urllib.request.urlopen(operator + "/metrics", timeout=5) as response:  # noqa: S310 - loopback
        text = response.read().decode()
    for line in text.splitlines():
        if line.startswith('gateway_connections_open{listener="main"}'):
            return float(line.rsplit(" ", 1)[1])
    return -1.0


class Sampler:
    """Open connections and RSS every half second, in a thread, while a part runs."""

    def __init__(self, proc: Process, operator: str) -> None:
        self.proc, self.operator = proc, operator
        self.samples: list[tuple[float, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = time.monotonic()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            try:
                conns = open_connections(self.operator)
            except OSError:
                conns = -1.0
            self.samples.append((round(time.monotonic() - self._t0, 1), conns, round(self.proc.rss_mb(), 1)))

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


# ---- C. soak ----------------------------------------------------------------------------------------------


async def soak(url: str, key: str, count: int, concurrency: int = 32) -> dict[str, int]:
    """``count`` mixed requests: what a day of real traffic does to the gateway, compressed."""
    import gzip

    auth = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    plain = json.dumps(BODY).encode()
    stream = json.dumps({**BODY, "stream": True}).encode()
    kinds = ["ok"] * 14 + [
        "gzip",
        "stream",
        "stream",
        "dropped",
        "dropped",
        "bad_json",
        "bad_key",
        "unsupported",
    ]
    outcomes: dict[str, int] = {}
    sent = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as session:

        async def worker(offset: int) -> None:
            nonlocal sent
            i = offset
            while sent < count:
                sent += 1
                kind = kinds[i % len(kinds)]
                i += 7
                headers, data = dict(auth), plain
                if kind in ("stream", "dropped"):
                    data = stream
                elif kind == "gzip":
                    data, headers["content-encoding"] = gzip.compress(plain), "gzip"
                elif kind == "bad_json":
                    data = b'{"model": '
                elif kind == "bad_key":
                    headers["authorization"] = "Bearer gw-not-a-key"
                elif kind == "unsupported":
                    headers["content-encoding"] = "br"
                try:
                    async with session.post(
                        url + "/v1/chat/completions", data=data, headers=headers
                    ) as response:
                        if kind == "dropped":
                            await response.content.readany()
                            response.close()  # hang up mid-stream: the connection is dropped
                        else:
                            await response.read()
                        status = str(response.status)
                except aiohttp.ClientError:
                    status = "client_error"
                outcomes[f"{kind}:{status}"] = outcomes.get(f"{kind}:{status}", 0) + 1

        await asyncio.gather(*(worker(n) for n in range(concurrency)))
    return dict(sorted(outcomes.items()))


# ---- the run ----------------------------------------------------------------------------------------------


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            model = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--slow-clients", type=int, default=None, help="default 2000 (quick: 150)")
    parser.add_argument("--soak", type=int, default=None, help="mixed requests (default 200000, quick: 3000)")
    parser.add_argument("--json", default=str(BENCH / "results" / "edge.json"))
    parser.add_argument("--parts", default="BCDE", help="which parts to run (B includes A)")
    parser.add_argument(
        "--trickle",
        type=float,
        default=None,
        help="seconds between two bytes of a slow head or body (default 2; quick: 0.25)",
    )
    parser.add_argument(
        "--abuser-concurrency",
        type=int,
        default=0,
        help="give the slow clients their own key with this many requests in flight at most "
        "(0: they share the normal traffic's key, with no limit)",
    )
    parser.add_argument(
        "--abuser-rpm",
        type=int,
        default=0,
        help="and this many requests a minute at most (0: no such limit)",
    )
    parser.add_argument(
        "--window", type=int, default=None, help="seconds of each wrk window (default 30; quick: 3)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="pairs of windows (alone, beside the slow clients) per mix (default 3; quick: 1)",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="parts B and C: the gateway on the first core alone, the fake upstream, wrk and the slow "
        "clients on the others, as when the clients are other machines (Linux)",
    )
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default="asyncio",
        help="parts B and C: the gateway's event loop (server.loop)",
    )
    parser.add_argument(
        "--mixes",
        default="head+body,head+body+unread_stream",
        help="slow-client mixes for part B, comma-separated (kinds: head, body, unread_stream)",
    )
    args = parser.parse_args()
    quick = args.quick
    # wrk takes whole seconds. 30 s, not 10: never-read streams come back in waves (every keep-alive
    # timeout, 5 s), and a 10 s window held two or three of them, a third more work in one than another.
    seconds = args.window or (3 if quick else 30)
    repeat = args.repeat or (1 if quick else 3)
    n_slow = args.slow_clients or (150 if quick else 2000)
    n_soak = args.soak or (3000 if quick else 200_000)
    edge = edge_settings(quick, n_slow)
    trickle = args.trickle or (0.25 if quick else 2.0)
    results: dict[str, Any] = {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d"),
        "quick": quick,
        "edge": edge,
        "trickle_s": trickle,
        "load": os.getloadavg(),
    }
    print(f"machine: {results['machine']}; load average at start {results['load'][0]:.1f}")
    print(f"edge settings: {edge}; slow clients send a byte every {trickle:g} s")
    gateway_cpus: set[int] | None = None
    everywhere: set[int] = set()
    if args.pin:
        everywhere = os.sched_getaffinity(0)  # Linux only, as /proc read here
        # On a shared machine the slow clients, wrk and the upstream take CPU from the cores the gateway
        # runs on, which in a deployment they would not (the clients are elsewhere): pinned, a window's
        # requests/s measures what the abuse costs the gateway itself.
        if len(everywhere) < 2:
            parser.error("--pin needs two cores at least")
        gateway_cpus = {min(everywhere)}
        os.sched_setaffinity(0, everywhere - gateway_cpus)  # this process and what it starts after
        rest = sorted(everywhere - gateway_cpus)
        print(f"pinned: the gateway on core {min(everywhere)}, everything else on {rest}")
    results["pinned"] = bool(args.pin)
    results["loop"] = args.loop
    print()
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-edge-") as tmpdir:
        tmp = Path(tmpdir)
        fake_port = free_port()
        fake = f"http://127.0.0.1:{fake_port}"
        upstream = Process([sys.executable, str(BENCH / "fake_upstream.py"), "--port", str(fake_port)], fake)
        stack.callback(upstream.stop)
        url, operator, key, proc = start_gateway(stack, tmp, fake, edge, cpus=gateway_cpus, loop=args.loop)
        port = int(url.rsplit(":", 1)[1])

        if "B" in args.parts:
            print(
                f"A/B. normal traffic (wrk, concurrency 16, {seconds} s windows) alone and beside slow "
                f"clients, {repeat} pair(s) of windows per mix"
            )
            wrk(url, key, 16, 1, tmp)  # warm-up
            meters = CpuMeters(proc.proc.pid, upstream.proc.pid)

            def normal() -> dict[str, Any]:
                return meters.measured(lambda: {**wrk(url, key, 16, seconds, tmp), "seconds": seconds})

            results["abuse"] = {}
            slow_key = key
            if args.abuser_concurrency or args.abuser_rpm:
                slow_key = limited_key(tmp, url, args.abuser_concurrency, args.abuser_rpm)
                wait_for_key(url, slow_key)
                print(
                    f"  the slow clients have their own key: at most {args.abuser_concurrency or 'any'} "
                    f"in flight, {args.abuser_rpm or 'any'} requests a minute"
                )
            results["abuse"]["abuser_key"] = {"concurrency": args.abuser_concurrency, "rpm": args.abuser_rpm}
            for mix in args.mixes.split(","):
                kinds = mix.split("+")
                runs = []
                for _ in range(repeat):
                    # Each window beside the slow clients right after one alone: the pair sees the same
                    # machine, which drifts between pairs (other sessions' work), so the ratio is per pair.
                    time.sleep(edge["keepalive_timeout"] + 1.0)  # the previous mix's connections are gone
                    # Sampled as the window beside the slow clients is: each sample is a /metrics scrape
                    # by the gateway (~2 ms of its CPU), which only that window paid before.
                    with Sampler(proc, operator):
                        alone = normal()
                    print(
                        f"  alone: {alone['rps']:8.0f} req/s  p50 {alone['p50_ms']:6.2f} ms  "
                        f"p99 {alone['p99_ms']:6.2f} ms  "
                        f"gateway CPU {alone['cpu_us_per_request']:.0f} µs/request"
                    )
                    print(f"    cores: {cores_line(alone['cores'])}")
                    with Sampler(proc, operator) as sampler:
                        under, slow = abuse(
                            port,
                            slow_key,
                            n_slow,
                            edge,
                            kinds,
                            max(seconds, edge["body_timeout"]) + 4.0,
                            normal,
                            trickle,
                        )
                    runs.append(report_mix(n_slow, mix, kinds, alone, under, slow, sampler))
                results["abuse"][mix] = summarize_runs(mix, runs)
            print()

        if "C" in args.parts:
            print(f"C. soak: {n_soak} mixed requests at concurrency 32")
            time.sleep(edge["keepalive_timeout"] + 1.0)  # the abuse's connections are gone
            asyncio.run(soak(url, key, min(2000, n_soak)))  # warm-up: pools, caches, every code path once
            time.sleep(edge["keepalive_timeout"] + 1.0)
            start = {"rss_mb": round(proc.rss_mb(), 1), "fds": descriptors(proc.proc.pid)}
            began = time.monotonic()
            outcomes = asyncio.run(soak(url, key, n_soak))
            took = time.monotonic() - began
            time.sleep(edge["keepalive_timeout"] + 1.0)  # kept-alive client connections close
            end = {"rss_mb": round(proc.rss_mb(), 1), "fds": descriptors(proc.proc.pid)}
            print(f"  {n_soak} requests in {took:.0f} s: {outcomes}")
            print(
                f"  RSS {start['rss_mb']} -> {end['rss_mb']} MB ({end['rss_mb'] - start['rss_mb']:+.1f} MB; "
                f"target <= +5), open descriptors {start['fds']} -> {end['fds']}\n"
            )
            results["soak"] = {
                "requests": n_soak,
                "seconds": round(took, 1),
                "outcomes": outcomes,
                "start": start,
                "end": end,
            }

    if args.pin:
        os.sched_setaffinity(0, everywhere)  # parts D and E share the cores as before
    if "D" in args.parts:
        workers_part(results, 3 if quick else 10)
    if "E" in args.parts:
        results["cpu_per_slow_connection_us"] = slow_connection_cost(300 if quick else 3000)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"\nresults in {args.json}")


def report_mix(
    n_slow: int,
    mix: str,
    kinds: list[str],
    alone: dict[str, Any],
    under: dict[str, Any],
    slow: dict[str, Any],
    sampler: Sampler,
) -> dict[str, Any]:
    """One pair of windows (alone, then beside the slow clients), printed; returns its figures."""
    kept = under["rps"] / alone["rps"] if alone["rps"] else 0.0
    print(
        f"  beside {n_slow} slow clients ({mix}): {under['rps']:8.0f} req/s  p50 "
        f"{under['p50_ms']:6.2f} ms  p99 {under['p99_ms']:6.2f} ms  ({kept:.0%} of alone)"
    )
    cpu_kept = alone["cpu_us_per_request"] / under["cpu_us_per_request"] if under["rps"] else 0.0
    print(
        f"    gateway CPU {under['cpu_us_per_request']:.0f} µs per normal request (slow clients "
        f"included): the gateway alone could keep {cpu_kept:.0%} of its throughput"
    )
    print(f"    cores: {cores_line(under['cores'])}")
    for kind in kinds:
        r = slow[kind]
        print(
            f"    {kind:>13}: {r['closed']:5d} closed, {r['within_deadline_plus_1s']:5d} within "
            f"deadline {r['deadline_s']:g} s + 1 s (longest {r['max_lifetime_s']} s), "
            f"{r['open_at_end']} still open when the run stopped"
        )
    peak_conns = max((x[1] for x in sampler.samples), default=0)
    peak_rss = max((x[2] for x in sampler.samples), default=0)
    print(f"    peak open connections {peak_conns:.0f}, peak RSS {peak_rss:.1f} MB (sampled every 0.5 s)")
    return {
        "alone": alone,
        "with_slow_clients": under,
        "throughput_kept": round(kept, 3),
        "cpu_throughput_kept": round(cpu_kept, 3),
        "slow_clients": slow,
        "samples_t_conns_rss": sampler.samples,
    }


def summarize_runs(mix: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The pairs of one mix: each kept ratio, their median and spread, and the slow clients summed (every
    one of them must have been closed within its bound, in every pair)."""
    kept = sorted(run["throughput_kept"] for run in runs)
    cpu_kept = sorted(run["cpu_throughput_kept"] for run in runs)
    others = [
        max(run["alone"]["cores"]["others"], run["with_slow_clients"]["cores"]["others"]) for run in runs
    ]
    slow: dict[str, Any] = {}
    for run in runs:
        for kind, figures in run["slow_clients"].items():
            if not isinstance(figures, dict):
                slow[kind] = slow.get(kind, 0) + figures
                continue
            into = slow.setdefault(
                kind, {**figures, "closed": 0, "within_deadline_plus_1s": 0, "open_at_end": 0}
            )
            for field in ("closed", "within_deadline_plus_1s", "open_at_end"):
                into[field] += figures[field]
            longest = [x for x in (into["max_lifetime_s"], figures["max_lifetime_s"]) if x is not None]
            into["max_lifetime_s"] = max(longest) if longest else None
    if len(runs) > 1:
        print(
            f"  {mix}, {len(runs)} pairs: kept {', '.join(f'{k:.0%}' for k in kept)} (median "
            f"{statistics.median(kept):.0%}); CPU-kept median {statistics.median(cpu_kept):.0%}; "
            f"other processes at most {max(others):.2f} cores"
        )
    return {
        "runs": runs,
        "throughput_kept": statistics.median(kept),
        "throughput_kept_min_max": [kept[0], kept[-1]],
        "cpu_throughput_kept": statistics.median(cpu_kept),
        "others_cores_max": round(max(others), 3),
        "slow_clients": slow,
    }


def slow_connection_cost(n: int) -> float:
    """E: what one half-head connection costs the gateway, from accept to its 408 and close."""

    async def slow(port: int) -> None:
        conns = []
        for _ in range(n):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nAuthoriz")
            conns.append((reader, writer))
        for reader, writer in conns:
            await reader.read()  # the 408, then the close
            writer.close()

    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-edge-") as tmpdir:
        fake_port = free_port()
        fake = f"http://127.0.0.1:{fake_port}"
        upstream = Process([sys.executable, str(BENCH / "fake_upstream.py"), "--port", str(fake_port)], fake)
        stack.callback(upstream.stop)
        edge = {"header_timeout": 1.0, "max_connections": n + 64}
        url, _, _, proc = start_gateway(stack, Path(tmpdir), fake, edge)
        pid = proc.proc.pid
        time.sleep(1.0)
        idle_from, idle_at = cpu_seconds(pid), time.monotonic()
        time.sleep(2.0)
        idle = (cpu_seconds(pid) - idle_from) / (time.monotonic() - idle_at)  # health probes, timers
        began, started = cpu_seconds(pid), time.monotonic()
        asyncio.run(slow(int(url.rsplit(":", 1)[1])))
        used = cpu_seconds(pid) - began - idle * (time.monotonic() - started)
    cost = used / n * 1e6
    print(f"E. {n} slow connections (half a head each, 408, close): {cost:.0f} µs of the gateway's CPU each")
    return round(cost, 1)


def workers_part(results: dict[str, Any], seconds: int) -> None:
    print("D. workers (wrk, non-streaming)")
    print(f"{'workers':>8} {'c16 req/s':>10} {'p50':>8} {'p99':>8} {'c64 req/s':>10} {'p50':>8} {'p99':>8}")
    results["workers"] = {}
    for workers in (1, 2):
        with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-edge-") as tmpdir:
            tmp = Path(tmpdir)
            fake_port = free_port()
            fake = f"http://127.0.0.1:{fake_port}"
            upstream = Process(
                [sys.executable, str(BENCH / "fake_upstream.py"), "--port", str(fake_port)], fake
            )
            stack.callback(upstream.stop)
            url, _, key, _ = start_gateway(stack, tmp, fake, {}, workers=workers)
            wrk(url, key, 16, 1, tmp)  # warm-up (both workers' pools)
            row = {c: wrk(url, key, c, seconds, tmp) for c in (16, 64)}
        results["workers"][workers] = row
        cells = " ".join(
            f"{r['rps']:>10.0f} {r['p50_ms']:>6.2f}ms {r['p99_ms']:>6.2f}ms" for r in row.values()
        )
        print(f"{workers:>8} {cells}")


if __name__ == "__main__":
    main()
