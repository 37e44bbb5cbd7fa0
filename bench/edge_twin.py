"""The edge's throughput target measured against a twin: what slow clients cost normal traffic, with the
VM's drift cancelled.

    python3 bench/edge_twin.py                       # 2,000 slow clients of the never-read mix, 5 pairs
    python3 bench/edge_twin.py --mix head+body --pairs 3
    python3 bench/edge_twin.py --quick               # a smoke run: short deadlines, 30 clients, one pair

bench/edge.py's part B compares a window of normal traffic alone with one beside the slow clients,
taken one after the other. On a shared VM the cores' speed moves by 10-30 % between two such windows
(docs/history/measurements.md), more than the slow clients cost, so a pair's ratio is mostly the VM's. Here
two identical gateways, X and Y, run pinned to the same core and are measured at the same time, each under
wrk at concurrency 16: whatever the VM does, it does to both. In each pair of windows, one with both
alone and one with the slow clients held against X only, the ratio X/Y beside the slow clients over the
ratio alone is what they cost X, from its share of the core.

Both gateways are always busy, so the kernel's scheduler gives each half of the core; the slow clients'
work comes out of X's half, and costs it twice the share of a whole core it would. ``kept on a whole
core`` = (1 + twin ratio) / 2 projects the twin ratio back to one gateway alone on the core, as part B
runs it; both figures are printed. Loopback only; the slow clients, wrk and the fake upstream share the
other core, as in part B with ``--pin``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from edge import edge_settings, machine, start_gateway  # noqa: E402
from edge_clients import abuse, limited_key, wait_for_key  # noqa: E402
from run import Process, free_port, wrk  # noqa: E402


def both(targets: list[tuple[str, str, Path]], seconds: int) -> list[dict[str, float]]:
    """wrk against each gateway at once, for the same ``seconds``."""
    out: list[dict[str, float]] = [{} for _ in targets]

    def one(i: int) -> None:
        url, key, tmp = targets[i]
        out[i] = wrk(url, key, 16, seconds, tmp)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(targets))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mix", default="head+body+unread_stream", help="slow-client kinds, as part B's")
    parser.add_argument("--slow-clients", type=int, default=2000)
    parser.add_argument("--abuser-concurrency", type=int, default=16, help="their own key's cap in flight")
    parser.add_argument("--window", type=int, default=15, help="seconds of each wrk window")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--quick", action="store_true", help="a smoke run (part B's --quick deadlines)")
    args = parser.parse_args()
    kinds = args.mix.split("+")
    trickle = 2.0
    if args.quick:
        args.slow_clients, args.window, args.pairs, trickle = 30, 2, 1, 0.25
    edge = edge_settings(args.quick, args.slow_clients)
    if not hasattr(os, "sched_getaffinity"):
        parser.error("pins processes to cores, which needs Linux (as part B's --pin)")
    everywhere = os.sched_getaffinity(0)
    if len(everywhere) < 2:
        parser.error("needs two cores at least")
    core = {min(everywhere)}
    os.sched_setaffinity(0, everywhere - core)
    print(f"machine: {machine()}; load average at start {os.getloadavg()[0]:.1f}")
    print(f"edge settings: {edge}; X and Y pinned to core {min(everywhere)}, everything else on the rest")
    print(
        f"slow clients against X: {args.slow_clients} ({args.mix}), their key capped at "
        f"{args.abuser_concurrency} in flight"
    )
    pairs: list[dict[str, Any]] = []
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-twin-") as tmpdir:
        fake_port = free_port()
        fake = f"http://127.0.0.1:{fake_port}"
        upstream = Process([sys.executable, str(BENCH / "fake_upstream.py"), "--port", str(fake_port)], fake)
        stack.callback(upstream.stop)
        targets = []
        for name in ("x", "y"):
            tmp = Path(tmpdir) / name
            tmp.mkdir()
            url, _operator, key, _proc = start_gateway(stack, tmp, fake, edge, cpus=core)
            targets.append((url, key, tmp))
        x_url, _, x_tmp = targets[0]
        slow_key = limited_key(x_tmp, x_url, args.abuser_concurrency, 0)
        wait_for_key(x_url, slow_key)
        both(targets, 2)  # warm-up
        port = int(x_url.rsplit(":", 1)[1])
        for _ in range(args.pairs):
            time.sleep(edge["keepalive_timeout"] + 1.0)  # the previous window's slow connections are gone
            x0, y0 = both(targets, args.window)
            (x1, y1), slow = abuse(
                port,
                slow_key,
                args.slow_clients,
                edge,
                kinds,
                max(args.window, edge["body_timeout"]) + 4.0,
                lambda: both(targets, args.window),
                trickle,
            )
            alone, beside = x0["rps"] / y0["rps"], x1["rps"] / y1["rps"]
            twin = beside / alone
            pair = {
                "alone": {"x": x0, "y": y0},
                "beside": {"x": x1, "y": y1},
                "twin_ratio": round(twin, 3),
                "kept_on_a_whole_core": round((1 + twin) / 2, 3),
                "slow_clients": slow,
            }
            pairs.append(pair)
            print(
                f"  alone X {x0['rps']:6.0f} Y {y0['rps']:6.0f} req/s (X/Y {alone:.3f}); beside X "
                f"{x1['rps']:6.0f} Y {y1['rps']:6.0f} (X/Y {beside:.3f}): twin ratio {twin:.1%}, kept on a "
                f"whole core {(1 + twin) / 2:.1%}; p99 X {x0['p99_ms']:.1f} -> {x1['p99_ms']:.1f} ms",
                flush=True,
            )
            for kind in kinds:
                r = slow[kind]
                late = r["closed"] - r["within_deadline_plus_1s"]
                print(f"    {kind}: {r['closed']} closed, {late} later than deadline + 1 s")
    twins = sorted(p["twin_ratio"] for p in pairs)
    kept = sorted(p["kept_on_a_whole_core"] for p in pairs)
    print(
        f"{args.mix}, {len(pairs)} pairs: twin ratio {', '.join(f'{t:.1%}' for t in twins)} (median "
        f"{statistics.median(twins):.1%}); kept on a whole core: median {statistics.median(kept):.1%} "
        f"({kept[0]:.1%}-{kept[-1]:.1%})"
    )
    if args.json:
        args.json.write_text(
            json.dumps({"mix": args.mix, "edge": edge, "machine": machine(), "pairs": pairs}, indent=1)
        )


if __name__ == "__main__":
    main()
