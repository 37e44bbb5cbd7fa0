"""How long the routing decision takes: feature extraction plus the decision, per request.

    python3 bench/routing_bench.py [--iterations N] [--json FILE]

Cases: a one-line chat turn, a code request, and an agent conversation with a long history (200 turns,
tool calls and results, about 100 kB of text). Reports the median, p99 and max over N runs of each, in
microseconds, on this machine.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from typing import Any

import orjson

from gateway.routing import BackendView, RouteInput, decide, extract_features
from gateway.routing.settings import RoutingSettings

BACKENDS = [
    BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=4, in_flight=2),
    BackendView(name="autoregressive", kind="autoregressive", model="g4", max_concurrency=256, in_flight=10),
]
TOOL = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}


def long_history(turns: int = 200) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful agent. " * 20}]
    for i in range(turns // 4):
        messages.append({"role": "user", "content": f"Find the invoices for customer {i} and sum them. " * 8})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"q": "x"}'},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "invoice 42: 100 EUR; " * 40})
        messages.append({"role": "assistant", "content": "The invoices add up to 4,200 EUR. " * 10})
    messages.append(
        {"role": "user", "content": "Thanks! Now write a short, friendly summary for the customer."}
    )
    return {"model": "auto", "messages": messages, "tools": [TOOL]}


CASES = {
    "chat (1 turn)": {
        "model": "auto",
        "messages": [{"role": "user", "content": "Hi! How was your weekend?"}],
    },
    "code (1 turn)": {
        "model": "auto",
        "messages": [
            {"role": "user", "content": "Write a python function that merges two sorted lists, with tests."}
        ],
    },
    "agent (200 turns)": long_history(),
}


def measure(payload: dict[str, Any], iterations: int) -> dict[str, float]:
    policy = RoutingSettings()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter_ns()
        features = extract_features(payload, "chat")
        decide(RouteInput(model="auto", features=features), BACKENDS, policy)
        samples.append((time.perf_counter_ns() - start) / 1000)
    samples.sort()
    return {
        "median_us": round(statistics.median(samples), 1),
        "p99_us": round(samples[int(len(samples) * 0.99) - 1], 1),
        "max_us": round(samples[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    machine = f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"
    results = {}
    print(f"routing decision time, {args.iterations} runs per case ({machine})")
    print(f"{'case':<20} {'size':>9} {'median':>10} {'p99':>10} {'max':>10}")
    for name, payload in CASES.items():
        size = len(orjson.dumps(payload))
        r = measure(payload, args.iterations)
        results[name] = {"bytes": size, **r}
        print(f"{name:<20} {size:>8}B {r['median_us']:>8.1f}µs {r['p99_us']:>8.1f}µs {r['max_us']:>8.1f}µs")
    if args.json:
        with open(args.json, "wb") as fh:
            fh.write(
                orjson.dumps(
                    {"machine": machine, "iterations": args.iterations, "results": results},
                    option=orjson.OPT_INDENT_2,
                )
            )


if __name__ == "__main__":
    main()
