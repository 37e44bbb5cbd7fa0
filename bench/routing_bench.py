"""How long the routing decision takes: feature extraction, the difficulty score and the decision.

    python3 bench/routing_bench.py [--iterations N] [--json FILE] [--rebuild-varied]

Cases: a one-line chat turn, a code request, a maths word problem, an 8,000-character turn (one
paragraph repeated, and varied requests one after another: bench/data/varied_turn.txt, drawn once
from this project's generators and kept, so that a new generator does not change the bench's input;
English with some French, Italian, Spanish and Portuguese, so not all ASCII, like real traffic;
``--rebuild-varied`` draws it anew), an agent
conversation with a long history (200 turns, tool calls and results, about 100 kB of text), and
adversarial turns: 8,000 characters of "SELECT a " (the pattern that was quadratic), a long
run of one repeated keyword, unbalanced code fences, 1 MB of one character, 1 MB of digits and colons,
1 MB of one emoji.
Reports the median, p99 and max over N runs of each, in microseconds, on this machine, with the shipped
scorer model loaded as the gateway loads it, after a warm-up (the scorer caches each word's n-gram
buckets, as a serving process does). Budget: median <= 150 µs for a one-turn chat, <= 5 ms for an
8,000-character turn (the scorer reads its first and last 1,500 characters), and every adversarial case
under 5 ms.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

# The tree this file is in, first: run from an exported commit's tree (bench/compare.py's way of
# measuring an earlier build), it measures that tree's code, not the installed package's.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.routing import BackendView, RouteInput, decide, extract_features
from gateway.routing.scorer.load import load_model
from gateway.routing.scorer.model import ScorerModel
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


def turn(text: str) -> dict[str, Any]:
    return {"model": "auto", "messages": [{"role": "user", "content": text}]}


_PROSE = (
    "The committee met on Tuesday to review the quarterly figures. Revenue rose 4% to $2.1M while costs "
    "held steady; Alice, Bob and Carol presented the regional results and asked for a second budget round. "
)


VARIED = Path(__file__).resolve().parent / "data" / "varied_turn.txt"


def varied_prose(chars: int = 7960) -> str:
    """8,000 characters of requests from this project's generators, one after another: the repeated
    paragraph above has 34 distinct words, a real long turn has hundreds (more features to look up)."""
    from gateway_training.data import builtin_examples

    examples = builtin_examples(40, 1)
    random.Random(1).shuffle(examples)
    texts = [
        e.messages[-1]["content"]
        for e in examples
        if e.label == "easy" and isinstance(e.messages[-1].get("content"), str)
    ]
    return "\n\n".join(texts)[:chars] + "\n\nSummarise this."


CASES = {
    "chat (1 turn)": turn("Hi! How was your weekend?"),
    "code (1 turn)": turn("Write a python function that merges two sorted lists, with tests."),
    "word problem (1 turn)": turn(
        "A train leaves at 9:40 and the trip takes 2 h 35 min with a 20 min stop. When does it arrive?"
    ),
    "8,000-char turn": turn((_PROSE * 40)[:7960] + " Summarise this."),
    "8,000-char turn, varied": turn(VARIED.read_text(encoding="utf-8")),
    "agent (200 turns)": long_history(),
    "adv: SELECT a x 8,000 chars": turn(("SELECT a " * 1000)[:8000]),
    "adv: repeated keyword": turn("prove " * 20_000),
    "adv: unbalanced fences": turn("```" + "x```y" * 2000),
    # Thousands of inline code spans with no code in them: only the first spans are looked at.
    "adv: backticked words": turn("`word` " * 2000),
    "adv: 1 MB of one character": turn("a" * 1_000_000),
    "adv: 1 MB of digits and colons": turn("9:" * 500_000),
    # Text that is neither ASCII nor Latin-1 takes the word pattern and the emoji count (text.py).
    "adv: 1 MB of one emoji": turn("\U0001f600" * 1_000_000),
}


def measure(payload: dict[str, Any], iterations: int, scorer: ScorerModel) -> dict[str, float]:
    policy = RoutingSettings()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter_ns()
        features = extract_features(payload, "chat", scorer)
        decide(RouteInput(model="auto", features=features, threshold=scorer.threshold), BACKENDS, policy)
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
    parser.add_argument("--model", default="default", help="a model file (default: the shipped one)")
    parser.add_argument("--rebuild-varied", action="store_true", help=f"draw {VARIED.name} anew, then run")
    args = parser.parse_args()
    if args.rebuild_varied:
        VARIED.write_text(varied_prose(), encoding="utf-8")
        CASES["8,000-char turn, varied"] = turn(VARIED.read_text(encoding="utf-8"))
    machine = f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"
    results = {}
    scorer = load_model(args.model)
    print(f"routing decision time, {args.iterations} runs per case ({machine})")
    print(f"{'case':<32} {'size':>9} {'median':>10} {'p99':>10} {'max':>10}")
    for name, payload in CASES.items():
        size = len(orjson.dumps(payload))
        # The megabyte cases cost the same as any other (a bounded window); fewer runs keep it short.
        runs = args.iterations if size < 100_000 else max(50, args.iterations // 20)
        r = measure(payload, runs, scorer)
        results[name] = {"bytes": size, **r}
        print(f"{name:<32} {size:>8}B {r['median_us']:>8.1f}µs {r['p99_us']:>8.1f}µs {r['max_us']:>8.1f}µs")
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
