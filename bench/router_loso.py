"""Leave-one-source-out evaluation of the routing scorer, per class and per source.

    python3 bench/router_loso.py [--per-source N] [--seed S] [--c C] [--json FILE]

Every training source (this project's generators, and the public collections shipped in
training/gateway_training/data/) is held out in turn: a model is trained on all the others and scores
the held-out source's examples as the gateway would (newest turn and context). So a figure here says how
the scorer does on a way of writing requests it has never seen, which is what a new deployment's
traffic is. Two figures per class: the scorer alone, and the routing policy, where the structural rules
(code in the text, ...) come first and the held-out score decides the rest, as in the gateway; the
per-source table is the policy's; then the classes' routing targets as the threshold moves (where each class
meets its own, and whether one threshold meets them all). Needs the training package installed
(pip install -e ./training: gateway_training and scikit-learn).
20-35 minutes on 2 cores.

The classes are the sources' categories: reasoning, math-word, math and code go to the autoregressive
backend, smalltalk, factual, transform, writing and advice to the diffusion backend.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections import defaultdict
from pathlib import Path

from gateway_training.data import builtin_examples
from gateway_training.fit import FitSettings, choose_threshold, leave_one_source_out, recall
from gateway_training.report import confusion, per_group, sweep, targets, under_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-source", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--c", type=float, default=FitSettings().c)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    started = time.perf_counter()
    examples = builtin_examples(args.per_source, args.seed)
    settings = FitSettings(c=args.c, seed=args.seed)
    predictions = leave_one_source_out(examples, settings)
    threshold = choose_threshold(predictions)
    elapsed = time.perf_counter() - started
    sources = sorted({e.source for e in examples})
    print(
        f"leave-one-source-out: {len(examples)} examples, {len(sources)} sources, C={args.c}, "
        f"threshold {threshold:.2f} (chosen on these held-out scores); {elapsed:.0f} s "
        f"({platform.machine()}, Python {platform.python_version()})\n"
    )
    print("The scorer alone:\n")
    print(per_group(predictions, threshold, lambda p: p.example.category, "class"))
    print()
    # What the gateway does: the structural rules (code in the text, ...) first, the held-out score after.
    routed = under_policy(predictions)
    print("The routing policy (structural rules first, then the held-out score):\n")
    print(per_group(routed, threshold, lambda p: p.example.category, "class"))
    print()
    print(confusion(predictions, threshold))
    print()
    print(sweep(predictions))
    print()
    # The routing targets as the threshold moves: can one threshold meet them all, and what does each cost?
    goals = targets(routed)
    print("The routing targets under the routing policy, as the threshold moves:\n")
    print(goals)
    print()
    print(per_group(routed, threshold, lambda p: p.example.source, "held-out source (policy)"))
    if args.json:
        by_class: dict[str, list[bool]] = defaultdict(list)
        for p in predictions:
            by_class[p.example.category].append((p.score >= threshold) == (p.example.label == "hard"))
        by_policy: dict[str, list[bool]] = defaultdict(list)
        for p in routed:
            by_policy[p.example.category].append((p.score >= threshold) == (p.example.label == "hard"))
        Path(args.json).write_text(
            json.dumps(
                {
                    "threshold": threshold,
                    "hard_recall": recall(predictions, threshold, "hard"),
                    "easy_recall": recall(predictions, threshold, "easy"),
                    "classes": {k: sum(v) / len(v) for k, v in sorted(by_class.items())},
                    "policy_classes": {k: sum(v) / len(v) for k, v in sorted(by_policy.items())},
                    "targets": goals,
                    "examples": len(examples),
                    "sources": sources,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
