"""This build against an earlier commit, side by side in one run, on this machine.

    python3 bench/compare.py --base 5ce3b6a                  # 5 pairs of 10 s windows per measure
    python3 bench/compare.py --base 5ce3b6a --pairs 7 --window 15 --json out.json
    python3 bench/compare.py --base 5ce3b6a --this-config extra.yaml   # a variant of this build
    python3 bench/compare.py --base <a commit without a trick> --config limits.yaml   # both builds

A speed trick is measured against a commit that leaves it out (or, for what a setting selects, against
this build with ``--base HEAD --this-config``): docs/performance.md lists them.

The earlier commit is exported with ``git archive`` into a temporary directory and both gateways run from
this environment's Python (the earlier build's code, today's libraries). Both start at once and stay up;
the gateway measured is pinned to the first core, the fake upstream (``bench/fake_upstream.py``) and wrk
to the others, so the load generator never competes with the gateway for its core. Each measure runs in
pairs of windows, one per build, the order alternating from pair to pair so a drift of the machine's
speed falls on both sides; a pair's ratio is the only figure that compares the builds, and the median of
the ratios over the pairs, with their spread, is what is reported.

Measures (one key, the default log level, the usage ledger on in this build, on SQLite in the run's
temporary directory):

- throughput at 16 connections with the model pinned (the diffusion backend's model id) and with
  ``"model": "auto"`` (this build routes it with the shipped scorer), non-streaming: requests/s, and the
  ratio this / base;
- latency at one connection: the difference of the median latencies, this minus base (ms): what this
  build adds on top of the base's own overhead;
- idle resident memory after a warm-up of both kinds of request, the shipped model loaded: MB, read once
  per build after the windows.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

from run import DIFFUSION_MODEL, Process, free_port, machine, two_backends, wrk  # noqa: E402

PINNED_MODEL = DIFFUSION_MODEL
MEASURES: dict[str, tuple[str, int]] = {
    # name: (model, connections)
    "pinned_c16": (PINNED_MODEL, 16),
    "auto_c16": ("auto", 16),
    "pinned_c1": (PINNED_MODEL, 1),
}


def export(commit: str, into: Path) -> Path:
    """The tree of ``commit`` as files under ``into`` (no git metadata)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


class Build:
    """One gateway build, started from its own source tree: ``python -m gateway`` with the tree as the
    working directory and first on the path, so the tree's ``gateway`` package is the one imported."""

    def __init__(self, label: str, tree: Path, tmp: Path, has_ledger: bool, extra: dict[str, Any]) -> None:
        self.label = label
        self.tree = tree
        self.tmp = tmp
        self.has_ledger = has_ledger
        self.extra = extra
        self.env = {"PYTHONPATH": str(tree)}

    def _python(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gateway", *args],
            cwd=self.tree,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            check=True,
            **kwargs,
        )

    def start(self, stack: ExitStack, upstream: str, cpus: set[int]) -> tuple[str, str, Process]:
        port = free_port()
        keys = self.tmp / f"keys-{self.label}.yaml"
        key = self._python("keys", "create", "bench", "--keys-file", str(keys)).stdout.strip()
        config: dict[str, Any] = {
            "server": {"host": "127.0.0.1", "port": port},
            "backends": two_backends(upstream, upstream, max_concurrency=1024),
            "auth": {"keys_file": str(keys)},
            "routing": {"health_interval": 5},
        }
        if self.has_ledger:
            config["usage"] = {"url": f"sqlite:///{self.tmp / f'usage-{self.label}.db'}"}
        _merge(config, self.extra)
        path = self.tmp / f"gateway-{self.label}.yaml"
        path.write_text(yaml.safe_dump(config))
        url = f"http://127.0.0.1:{port}"
        proc = Process(
            [sys.executable, "-m", "gateway", "serve", "--config", str(path)],
            url,
            env=self.env,
            cpus=cpus,
            cwd=self.tree,
        )
        stack.callback(proc.stop)
        return url, key, proc


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
    for name, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(name), dict):
            _merge(into[name], value)
        else:
            into[name] = value


def _merged(*configs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for config in configs:
        _merge(out, copy.deepcopy(config))
    return out


def body(model: str) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": "Hi! How was your weekend?"}],
        "max_tokens": 64,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def window(
    url: str, key: str, proc: Process, measure: str, seconds: float, tmp: Path, cpus: set[int]
) -> dict:
    model, connections = MEASURES[measure]
    before = cpu_seconds(proc.proc.pid)
    result = wrk(url, key, connections, seconds, tmp, body=body(model), cpus=cpus)
    used = cpu_seconds(proc.proc.pid) - before
    requests = result["rps"] * seconds
    result["cpu_us_per_request"] = used / requests * 1e6 if requests else 0.0
    if result["errors"]:
        raise RuntimeError(f"{measure}: {result['errors']:.0f} non-2xx answers from {url}")
    return result


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", default="5ce3b6a", help="the earlier commit (default: %(default)s)")
    parser.add_argument("--pairs", type=int, default=5, help="pairs of windows per measure (>= 5)")
    parser.add_argument("--window", type=float, default=10.0, help="seconds per window")
    parser.add_argument("--measures", default=",".join(MEASURES), help="comma-separated subset")
    parser.add_argument("--config", type=Path, help="YAML merged into both builds' configuration")
    parser.add_argument("--this-config", type=Path, help="YAML merged into this build's configuration")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        sys.exit("needs two cores: the gateway on one, the upstream and wrk on the others")
    gateway_cpus, rest = {cores[0]}, set(cores[1:])
    os.sched_setaffinity(0, rest)  # this process and what it starts: fake upstream, wrk
    measures = args.measures.split(",")
    both = yaml.safe_load(args.config.read_text()) if args.config else {}
    extra = yaml.safe_load(args.this_config.read_text()) if args.this_config else {}

    with tempfile.TemporaryDirectory() as tmpdir, ExitStack() as stack:
        tmp = Path(tmpdir)
        base_tree = export(args.base, tmp / "base")
        builds = [
            Build("base", base_tree, tmp, has_ledger=(base_tree / "gateway" / "usage").is_dir(), extra=both),
            Build("this", ROOT, tmp, has_ledger=True, extra=_merged(both, extra)),
        ]
        port = free_port()
        upstream = f"http://127.0.0.1:{port}"
        fake_args = [sys.executable, str(BENCH / "fake_upstream.py"), "--port", str(port)]
        fake = Process(fake_args, upstream + "/health")
        stack.callback(fake.stop)
        running = {b.label: b.start(stack, upstream, gateway_cpus) for b in builds}
        for url, key, _proc in running.values():
            for model in ("auto", PINNED_MODEL):  # warm-up: imports, the scorer's model, connections
                wrk(url, key, 4, 2, tmp, body=body(model), cpus=rest)
        time.sleep(2)
        idle_warm = {label: proc.rss_mb() for label, (_, _, proc) in running.items()}

        print(f"{machine()}; base {args.base}, {args.pairs} pairs of {args.window:g} s windows per measure")
        print("gateway pinned to core", cores[0], "; fake upstream and wrk on", sorted(rest))
        results: dict[str, Any] = {"base": args.base, "pairs": args.pairs, "window_s": args.window}
        results["measures"] = {}
        for measure in measures:
            pairs = []
            for i in range(args.pairs):
                order = ["base", "this"] if i % 2 == 0 else ["this", "base"]
                pair = {}
                for label in order:
                    url, key, proc = running[label]
                    pair[label] = window(url, key, proc, measure, args.window, tmp, rest)
                pairs.append(pair)
                line = "  ".join(
                    f"{label} {pair[label]['rps']:7.0f} req/s p50 {pair[label]['p50_ms']:.3f} ms "
                    f"{pair[label]['cpu_us_per_request']:5.0f} µs CPU"
                    for label in ("base", "this")
                )
                print(f"{measure} pair {i + 1}: {line}", flush=True)
            ratios = [p["this"]["rps"] / p["base"]["rps"] for p in pairs]
            added = [p["this"]["p50_ms"] - p["base"]["p50_ms"] for p in pairs]
            tail = [p["this"]["p99_ms"] - p["base"]["p99_ms"] for p in pairs]
            cpu = [p["this"]["cpu_us_per_request"] / p["base"]["cpu_us_per_request"] for p in pairs]
            results["measures"][measure] = {
                "pairs": pairs,
                "throughput_ratio": summary(ratios),
                "added_p50_ms": summary(added),
                "added_p99_ms": summary(tail),
                "cpu_per_request_ratio": summary(cpu),
            }
            r, a, c, t = summary(ratios), summary(added), summary(cpu), summary(tail)
            print(
                f"{measure}: throughput this/base median {r['median']:.3f} ({r['min']:.3f}-{r['max']:.3f}); "
                f"p50 this-base {a['median']:+.3f} ms ({a['min']:+.3f} to {a['max']:+.3f}); "
                f"p99 this-base {t['median']:+.3f} ms ({t['min']:+.3f} to {t['max']:+.3f}); "
                f"CPU per request this/base {c['median']:.3f} ({c['min']:.3f}-{c['max']:.3f})",
                flush=True,
            )
        time.sleep(2)  # idle: let the last window's connections close
        idle_after = {label: proc.rss_mb() for label, (_, _, proc) in running.items()}
        results["idle_rss_mb"] = {"after_warm_up": idle_warm, "after_run": idle_after}
        for when, rss in results["idle_rss_mb"].items():
            figures = ", ".join(f"{k} {v:.1f} MB" for k, v in rss.items())
            print(f"idle RSS {when.replace('_', ' ')}: {figures}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
