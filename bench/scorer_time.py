"""The difficulty score's time with the compiled kernel and with the pure-Python reference, side by side.

    python3 bench/scorer_time.py [--rounds 25] [--calls 200] [--cold] [--json FILE]

One process, the shipped model loaded twice (``compiled=True`` and ``compiled=False``), their calls
alternating round by round after a warm-up, so that a drift of the machine's speed falls on both: the
median time of each side's rounds, and the median and spread (third lowest to third highest) of the rounds'
ratios (kernel / reference). ``--cold`` writes 48 MB before each call, so the CPU's caches hold none of
the scorer's code or data: closer to a serving process, where the rest of each request's work evicts it.

Cases: the chat turn of ``bench/compare.py``, the same behind a persona, a word problem, a follow-up after a
hard turn, a turn with curly quotes (beyond ASCII: the kernel hashes, text.py finds the text features) and
the two 8,000-character turns of ``bench/routing_bench.py``.
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

# The tree this file is in, first (as bench/routing_bench.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.routing.scorer.compiled import KERNEL
from gateway.routing.scorer.load import load_model

VARIED = Path(__file__).resolve().parent / "data" / "varied_turn.txt"
PERSONA = "You are Mia, a cheerful assistant in a Telegram group. Keep answers short, friendly and kind. " * 2
CURLY = "I\u2019m off to the \u201cbig\u201d match, wish me luck!"
PROBLEM = "A train leaves at 9:40 and travels 210 km at 70 km/h. At what time does it arrive, in minutes?"

CASES: dict[str, tuple[str, str, str]] = {
    'chat ("Hi! How was your weekend?")': ("Hi! How was your weekend?", "", ""),
    "the same behind a 190-character persona": ("Hi! How was your weekend?", PERSONA, ""),
    "a word problem (96 characters)": (PROBLEM, "", ""),
    'a follow-up ("and for 5 boxes?") after a hard turn': ("and for 5 boxes?", "", PROBLEM),
    "a chat turn with curly quotes (beyond ASCII)": (CURLY, "", ""),
    "8,000-character turn, one paragraph repeated": (
        ("Please look at the following paragraph and tell me what you think of it overall. " * 100)[:8000],
        "",
        "",
    ),
    "8,000-character turn, varied requests": (VARIED.read_text(encoding="utf-8")[:8000], "", ""),
}


def _timer(cold: bool) -> Callable[[Callable[[], object], int], float]:
    junk = bytearray(48 << 20)
    lines = b"\1" * (len(junk) // 64)

    def run(call: Callable[[], object], calls: int) -> float:
        total = 0
        for _ in range(calls):
            if cold:
                junk[::64] = lines  # one byte per cache line: every line of the 48 MB written
            start = time.perf_counter_ns()
            call()
            total += time.perf_counter_ns() - start
        return total / calls / 1000

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--calls", type=int, default=200, help="calls per round (a tenth for the long turns)")
    parser.add_argument("--cold", action="store_true", help="evict the CPU's caches before each call")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if KERNEL is None:
        sys.exit("the scorer's kernel is not built here (the install needs a C compiler and headers)")
    kernel, reference = load_model(compiled=True), load_model(compiled=False)
    run = _timer(args.cold)
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}", end="")
    print(f", {args.rounds} rounds, {'cold' if args.cold else 'warm'} caches")
    results = {}
    for label, request in CASES.items():
        assert kernel.score(*request) == reference.score(*request), label
        calls = args.calls if len(request[0]) < 1000 else max(args.calls // 10, 1)
        for model in (kernel, reference):
            run(functools.partial(model.score, *request), 50)
        times: dict[str, list[float]] = {"kernel": [], "reference": []}
        for i in range(args.rounds):
            order = [("kernel", kernel), ("reference", reference)]
            for side, model in order if i % 2 == 0 else order[::-1]:
                times[side].append(run(functools.partial(model.score, *request), calls))
        ratios = sorted(k / r for k, r in zip(times["kernel"], times["reference"], strict=True))
        low, high = ratios[min(2, len(ratios) - 1)], ratios[max(len(ratios) - 3, 0)]
        row = {
            "reference_us": statistics.median(times["reference"]),
            "kernel_us": statistics.median(times["kernel"]),
            "ratio": statistics.median(ratios),
            "ratio_low": low,
            "ratio_high": high,
        }
        results[label] = row
        print(
            f"{label:55s} reference {row['reference_us']:8.1f} µs  kernel {row['kernel_us']:8.1f} µs  "
            f"ratio {row['ratio']:.2f} ({low:.2f}-{high:.2f})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
