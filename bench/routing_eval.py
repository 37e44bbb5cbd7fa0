"""Evaluate the default routing policy on real prompts: per-class accuracy and decision time.

    python3 bench/routing_eval.py [--misses] [--model FILE] [--json FILE]

The set (bench/data/routing_eval.jsonl, built by bench/build_routing_eval.py) holds real prompts from
public collections, each labelled with the backend the policy intends for it. A prompt is counted right
when the decision's first candidate is of the expected kind. The policy runs as the gateway runs it,
with the shipped difficulty scorer (or --model) at its threshold.

None of these collections (BFCL, HumanEval, CHAMP) is a training source of the scorer, so the whole set
is held out from it. The set is also split in two halves by a hash of each prompt's id: "dev" is the half
whose misses were looked at while writing the earlier keyword patterns (and the structural code
patterns that remain), "test" the half that was not; both are reported.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import zlib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from gateway.routing import BackendView, RouteInput, decide, extract_features
from gateway.routing.scorer.load import DEFAULT_MODEL, load_model
from gateway.routing.settings import RoutingSettings

DATA = Path(__file__).resolve().parent / "data" / "routing_eval.jsonl"
BACKENDS = [
    BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=4),
    BackendView(name="autoregressive", kind="autoregressive", model="g4", max_concurrency=256),
]


def split(key: str) -> str:
    return "dev" if zlib.crc32(key.encode()) % 2 == 0 else "test"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--misses", action="store_true", help="list the dev half's prompts routed wrongly")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help="a scorer model file (default: the shipped one)"
    )
    args = parser.parse_args()
    policy = RoutingSettings()
    scorer = load_model(args.model)
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    right: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    times: list[float] = []
    misses: list[tuple[str, str, str, str]] = []
    for row in rows:
        payload: dict[str, Any] = {"model": "auto", **row["request"]}
        start = time.perf_counter_ns()
        features = extract_features(payload, "chat", scorer)
        decision = decide(
            RouteInput(model="auto", features=features, threshold=scorer.threshold), BACKENDS, policy
        )
        times.append((time.perf_counter_ns() - start) / 1000)
        got = decision.candidates[0]
        cls = row["class"]
        half = split(row["id"])
        total[cls, half] += 1
        reasons[cls].update(r.partition("=")[0] for r in decision.reasons)
        if got == row["expected"]:
            right[cls, half] += 1
        elif half == "dev":
            text = row["request"]["messages"][-1]["content"]
            misses.append((cls, row["id"], ",".join(decision.reasons), text[:90].replace("\n", " ")))

    times.sort()
    n = sum(total.values())
    to_ar = sum(1 for r in rows if r["expected"] == "autoregressive")
    print(f"routing evaluation: {n} real prompts ({platform.machine()}, Python {platform.python_version()})")
    print(f"{'class':<8} {'expected':<15} {'prompts':>7} {'dev':>8} {'test':>8}  reasons given (all)")
    results: dict[str, Any] = {}
    for cls in sorted({c for c, _ in total}):
        expected = next(r["expected"] for r in rows if r["class"] == cls)
        acc = {h: right[cls, h] / total[cls, h] if total[cls, h] else 0.0 for h in ("dev", "test")}
        count = total[cls, "dev"] + total[cls, "test"]
        top = ", ".join(f"{k} {v}" for k, v in reasons[cls].most_common(4))
        print(f"{cls:<8} {expected:<15} {count:>7} {acc['dev']:>7.1%} {acc['test']:>7.1%}  {top}")
        results[cls] = {
            "expected": expected,
            "prompts": count,
            "dev": round(acc["dev"], 4),
            "test": round(acc["test"], 4),
        }
    overall = sum(right.values()) / n
    median, p99 = statistics.median(times), times[int(len(times) * 0.99) - 1]
    print(
        f"overall accuracy {overall:.1%}; {to_ar} of {n} prompts are labelled for the autoregressive backend"
    )
    print(f"decision time per prompt: median {median:.1f} µs, p99 {p99:.1f} µs, max {times[-1]:.1f} µs")
    if args.misses:
        for cls, key, why, text in misses:
            print(f"  miss {cls:<6} {key:<28} {why:<28} {text}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "classes": results,
                    "overall": round(overall, 4),
                    "decision_us": {
                        "median": round(median, 1),
                        "p99": round(p99, 1),
                        "max": round(times[-1], 1),
                    },
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
