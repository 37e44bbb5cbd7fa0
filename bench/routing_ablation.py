"""What each mechanism of the routing scorer adds, on prompts from groups held out: an ablation table.

    python3 bench/routing_ablation.py [--folds 8] [--only NAME ...] [--json FILE]

Each row re-runs the trainer's held-out evaluation (``gateway_training.report.evaluate``: groups dealt
into folds, each scored by a model fitted on the others, then calibrated) with one mechanism left out or
changed, and reports on the real prompts (the shipped collections and, when ``bench/data/real-eval/``
holds them, the evaluation-only ones: ``bench/build_real_prompts.py``) and on the written groups: the
area under the ROC curve, the balanced recall at the threshold each variant chooses, and the hard recall
at the threshold where easy recall is 94 %. Needs the training package (pip install -e ./training).
A full run is about 2 minutes per row on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

from gateway_training.corpus import load_contexts, real_licences
from gateway_training.data import builtin_examples
from gateway_training.fit import FitSettings, Prediction, recall
from gateway_training.report import evaluate

EVAL_ONLY = Path(__file__).resolve().parent / "data" / "real-eval"
ALL = frozenset({"ngrams", "text", "shape", "context"})

# name -> (what it tests, settings change, per-source generator examples, train contexts used)
VARIANTS: dict[str, tuple[str, dict[str, object], int, bool]] = {
    "shipped": ("the shipped recipe", {}, 20, True),
    "no-ngrams": ("without the hashed word and character n-grams", {"parts": ALL - {"ngrams"}}, 20, True),
    "no-text": ("without text.py's words, pairs and pasted words", {"parts": ALL - {"text"}}, 20, True),
    "no-shape": ("without text.py's shape features", {"parts": ALL - {"shape"}}, 20, True),
    "no-context": ("without the context's features", {"parts": ALL - {"context"}}, 20, True),
    "no-context-copies": ("without training copies behind contexts", {"context_copies": 0}, 20, False),
    "no-generators": ("without the generated examples", {}, 0, True),
    "c=1": ("regularised 4x more (C 1)", {"c": 1.0}, 20, True),
    "c=16": ("regularised 4x less (C 16)", {"c": 16.0}, 20, True),
}


def auc(predictions: list[Prediction]) -> float:
    """The probability that a random hard prompt scores above a random easy one (ties count half)."""
    ranked = sorted(predictions, key=lambda p: p.score)
    hard = sum(p.example.label == "hard" for p in ranked)
    easy = len(ranked) - hard
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j].score == ranked[i].score:
            j += 1
        mid = (i + j + 1) / 2  # the mean 1-based rank of the tie
        rank_sum += mid * sum(p.example.label == "hard" for p in ranked[i:j])
        i = j
    return (rank_sum - hard * (hard + 1) / 2) / max(1, hard * easy)


def hard_at_easy(predictions: list[Prediction], easy_recall: float = 0.94) -> float:
    easy = sorted(p.score for p in predictions if p.example.label == "easy")
    t = easy[min(len(easy) - 1, int(easy_recall * len(easy)))]
    return recall(predictions, t + 1e-12, "hard")


def figures(predictions: list[Prediction], threshold: float) -> dict[str, float]:
    hard, easy = recall(predictions, threshold, "hard"), recall(predictions, threshold, "easy")
    return {
        "auc": round(auc(predictions), 4),
        "hard": round(hard, 4),
        "easy": round(easy, 4),
        "balanced": round((hard + easy) / 2, 4),
        "hard_at_easy_94": round(hard_at_easy(predictions), 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=8)
    parser.add_argument("--only", nargs="*", choices=sorted(VARIANTS), default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    extra = EVAL_ONLY if EVAL_ONLY.is_dir() else None
    eval_only = set(real_licences(extra)) - set(real_licences(None)) if extra else set()
    train_contexts, eval_contexts = load_contexts("train"), load_contexts("eval")
    rows = []
    print(
        f"machine: {platform.node()}, {platform.machine()}, Python {platform.python_version()}; "
        f"{args.folds} folds; evaluation-only collections: {len(eval_only)}",
        file=sys.stderr,
    )
    for name in args.only or list(VARIANTS):
        what, change, per_source, contexts = VARIANTS[name]
        settings = replace(FitSettings(), **change)  # type: ignore[arg-type]
        examples = builtin_examples(per_source, settings.seed, extra)
        started = time.monotonic()
        evaluation = evaluate(
            examples,
            settings,
            args.folds,
            train_contexts if contexts else None,
            eval_contexts,
            trainable=lambda e: e.source not in eval_only,
            measured=lambda e: not e.unit.startswith("gen:"),
        )
        t = evaluation.threshold
        real = evaluation.plain(lambda e: e.unit.startswith("real:"))
        written = evaluation.plain(lambda e: e.unit.startswith("written:"))
        in_context = [
            p
            for p in evaluation.predictions
            if p.variant != "plain" and not p.example.unit.startswith("gen:")
        ]
        row = {
            "variant": name,
            "what": what,
            "threshold": t,
            "real": figures(real, t),
            "written": figures(written, t),
            "in_contexts": figures(in_context, t),
            "seconds": round(time.monotonic() - started),
        }
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    print(
        "| variant | real AUC | real hard / easy at its threshold | real hard at easy 94 % | written AUC "
        "| in contexts AUC |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        real, written, ctx = r["real"], r["written"], r["in_contexts"]
        print(
            f"| {r['what']} | {real['auc']:.3f} | {100 * real['hard']:.1f} / {100 * real['easy']:.1f} % "
            f"(t {r['threshold']:.2f}) | {100 * real['hard_at_easy_94']:.1f} % | {written['auc']:.3f} "
            f"| {ctx['auc']:.3f} |"
        )
    if args.json:
        args.json.write_text(json.dumps({"folds": args.folds, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
