"""What shadow evaluation costs the client: its latency with sampling off, at 1 % and on every request.

    python3 bench/shadow_overhead.py              # 5 rounds of 200 requests per gateway, one at a time

Two simulated backends (``gateway simulate --profile instant``: they answer at once, so whatever the
gateway does shows) and four gateways in front of them, each a ``gateway serve`` process of its own:

* ``off`` and ``off-again``: shadowing off, twice: the difference between the two is the noise;
* ``on-1%``: ``shadow.share: 0.01``, what a deployment would run;
* ``on-100%``: every eligible request also answered by the other backend and judged twice, all on the
  same machine as the client: the worst case for the work running beside the client's next request.

The client sends the same mix (money and law questions the simulated diffusion backend answers worse,
chit-chat, a proof; half of them streamed) to each gateway in turn, one request at a time, rounds
interleaved so that the shared machine's drift hits every gateway alike, and reports the client's
wall-clock latency per request: p50, p95 and mean, and how many requests each gateway shadowed (from its
/metrics). Nothing here asserts a time: it is a measurement to read, next to the noise it prints.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.commands.keys import add_key  # noqa: E402

MODES = {"off": 0.0, "off-again": 0.0, "on-1%": 0.01, "on-100%": 1.0}
PROMPTS = [
    "What is an escrow account when buying a house?",
    "Hi! How was your weekend?",
    "Explain probate to me in simple words.",
    "Give me a fun fact about owls.",
    "Prove that there are infinitely many primes.",
    "Write a short poem about rain.",
    "Who pays the escrow fees at closing?",
    "What should I cook for dinner tonight?",
]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    path = [str(ROOT), str(ROOT / "training"), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}


def _wait(url: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


def _gateway_config(tmp: Path, mode: str, share: float, sims: dict[str, int], token: str) -> Path:
    config: dict[str, Any] = {
        "server": {"host": "127.0.0.1", "port": _port(), "log_level": "warning"},
        "backends": [
            {"name": kind, "kind": kind, "url": f"http://127.0.0.1:{port}", "model": model}
            for kind, (port, model) in {
                "diffusion": (sims["diffusion"], "nvidia/diffusiongemma-26B-A4B-it-NVFP4"),
                "autoregressive": (sims["autoregressive"], "google/gemma-4-26B-A4B-it"),
            }.items()
        ],
        "auth": {"keys_file": str(tmp / "keys.yaml")},
        "usage": {"url": f"sqlite:///{tmp / f'usage-{mode}.db'}"},
        "telemetry": {"metrics_token": token},
        "shadow": {"share": share},
    }
    path = tmp / f"{mode}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _shadowed(base: str, token: str) -> int:
    text = httpx.get(base + "/metrics", headers={"authorization": f"Bearer {token}"}, timeout=5).text
    return int(
        sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("gateway_shadow_requests_total{") and 'work="shadow"' in line
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200, help="requests per gateway per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    procs: list[subprocess.Popen[bytes]] = []
    token = secrets.token_urlsafe(16)
    try:
        with tempfile.TemporaryDirectory() as tmpdir:
            tmp = Path(tmpdir)
            key = add_key(tmp / "keys.yaml", "bench", expires=None)
            sims = {kind: _port() for kind in ("diffusion", "autoregressive")}
            for kind, port in sims.items():
                command = ["simulate", "--kind", kind, "--port", str(port), "--profile", "instant"]
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "gateway", *command],
                        env=_env(),
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
                _wait(f"http://127.0.0.1:{port}/health")
            bases = {}
            for mode, share in MODES.items():
                config = _gateway_config(tmp, mode, share, sims, token)
                port = yaml.safe_load(config.read_text())["server"]["port"]
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "gateway", "serve", "--config", str(config)],
                        env=_env(),
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
                bases[mode] = f"http://127.0.0.1:{port}"
                _wait(bases[mode] + "/readyz")
            latencies = _measure(bases, key, args.count, args.rounds)
            shadowed = {mode: _shadowed(base, token) for mode, base in bases.items()}
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)
    _report(latencies, shadowed, args)


def _measure(bases: dict[str, str], key: str, count: int, rounds: int) -> dict[str, list[float]]:
    headers = {"authorization": f"Bearer {key}"}
    clients = {mode: httpx.Client(base_url=base, headers=headers, timeout=30) for mode, base in bases.items()}
    out: dict[str, list[float]] = {mode: [] for mode in bases}

    def one(client: httpx.Client, i: int) -> float:
        body = {"model": "auto", "messages": [{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}]}
        body["stream"] = i % 2 == 1
        started = time.perf_counter()
        response = client.post("/v1/chat/completions", json=body)
        response.read()
        if response.status_code != 200:
            raise SystemExit(f"HTTP {response.status_code}: {response.text[:200]}")
        return time.perf_counter() - started

    try:
        for client in clients.values():  # warm-up
            for i in range(20):
                one(client, i)
        for _ in range(rounds):
            for mode, client in clients.items():
                out[mode] += [one(client, i) for i in range(count)]
    finally:
        for client in clients.values():
            client.close()
    return out


def _report(latencies: dict[str, list[float]], shadowed: dict[str, int], args: argparse.Namespace) -> None:
    print(
        f"client latency per request, ms ({args.rounds} rounds of {args.count} requests per gateway, "
        "one at a time, half streamed; instant simulated backends):"
    )
    print(f"  {'gateway':<10} {'p50':>7} {'p95':>7} {'mean':>7}  shadowed")
    rows = {}
    for mode, times in latencies.items():
        ms = sorted(t * 1000 for t in times)
        rows[mode] = (ms[len(ms) // 2], ms[int(len(ms) * 0.95)], statistics.fmean(ms))
        p50, p95, mean = rows[mode]
        print(f"  {mode:<10} {p50:7.2f} {p95:7.2f} {mean:7.2f}  {shadowed[mode]}")
    base = rows["off"]
    for mode in ("off-again", "on-1%", "on-100%"):
        p50, p95, _ = rows[mode]
        print(f"  {mode} against off: p50 {p50 - base[0]:+.2f} ms, p95 {p95 - base[1]:+.2f} ms")
    print(f"measured {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC")


if __name__ == "__main__":
    main()
