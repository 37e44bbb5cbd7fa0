"""The scorer's evaluation, run and printed: held-out figures by class, language and context, a
threshold sweep, the reliability of the scores, and the requests it got wrong.

``evaluate`` runs the group-held-out evaluation (``fit.cross_validate``), fits the calibration on the
plain held-out scores and chooses the threshold on them; the tables below read its predictions. Figures
are recalls: the share of hard requests scored at or above the threshold, and of easy ones below it.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from gateway_training.corpus import CONTEXT_KINDS, HARD_CLASSES, Contexts
from gateway_training.fit import (
    FitSettings,
    Prediction,
    calibrate,
    calibrated,
    choose_threshold,
    cross_validate,
    recall,
)
from gateway_training.sources import Example

__all__ = [
    "TARGETS",
    "Evaluation",
    "evaluate",
    "misrouted",
    "per_class",
    "per_context",
    "per_language",
    "pooled",
    "progress_line",
    "reliability",
    "sweep",
]

# The routing targets on real prompts from held-out sources (docs/scorer.md).
TARGETS = {"hard": 0.92, "easy": 0.94, "class": 0.88, "language": 0.85, "context_gap": 0.03}


@dataclass(frozen=True, slots=True)
class Evaluation:
    raw: list[Prediction]  # held-out, uncalibrated probabilities
    predictions: list[Prediction]  # the same, calibrated
    calibration: tuple[float, float]
    threshold: float

    def plain(self, keep: Callable[[Example], bool] = lambda e: True) -> list[Prediction]:
        return [p for p in self.predictions if p.variant == "plain" and keep(p.example)]


def progress_line(done: int, total: int, elapsed: float) -> None:
    """Folds done and the time left, on one line that rewrites itself (stderr)."""
    left = elapsed / done * (total - done)
    end = "\n" if done == total else ""
    line = f"\r  fold {done}/{total}, {elapsed:.0f} s so far, about {left:.0f} s left   "
    print(line, end=end, file=sys.stderr, flush=True)


def evaluate(
    examples: Sequence[Example],
    settings: FitSettings,
    folds: int,
    train_contexts: Contexts | None,
    eval_contexts: Contexts | None,
    *,
    trainable: Callable[[Example], bool] = lambda e: True,
    measured: Callable[[Example], bool] = lambda e: True,
    progress: Callable[[int, int, float], None] | None = None,
    own: Callable[[Example], bool] = lambda e: False,
) -> Evaluation:
    raw = cross_validate(
        examples,
        settings,
        folds,
        train_contexts,
        eval_contexts,
        trainable=trainable,
        measured=measured,
        progress=progress,
        own=own,
    )
    plain = [p for p in raw if p.variant == "plain"]
    calibration = calibrate(plain)
    predictions = calibrated(raw, calibration)
    threshold = choose_threshold([p for p in predictions if p.variant == "plain"])
    return Evaluation(raw, predictions, calibration, threshold)


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f} %"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def pooled(predictions: Sequence[Prediction], threshold: float) -> tuple[float, float]:
    """Hard and easy recall over every prediction (micro)."""
    return recall(predictions, threshold, "hard"), recall(predictions, threshold, "easy")


def per_class(predictions: Sequence[Prediction], threshold: float) -> str:
    by: dict[str, list[Prediction]] = {}
    for p in predictions:
        by.setdefault(p.example.category, []).append(p)
    rows = []
    for cls in sorted(by, key=lambda c: (c in HARD_CLASSES, c)):
        group = by[cls]
        label = "hard" if cls in HARD_CLASSES else "easy"
        rows.append((cls, label, str(len(group)), _pct(recall(group, threshold, label))))
    return _table(("class", "label", "n", "recall"), rows)


def per_language(predictions: Sequence[Prediction], threshold: float, least: int = 100) -> str:
    """Languages with at least ``least`` examples: hard, easy and balanced recall."""
    by: dict[str, list[Prediction]] = {}
    for p in predictions:
        by.setdefault(p.example.lang or "?", []).append(p)
    rows = []
    for lang in sorted(by, key=lambda k: -len(by[k])):
        group = by[lang]
        if len(group) < least:
            continue
        hard, easy = pooled(group, threshold)
        balanced = (hard + easy) / 2 if not (math.isnan(hard) or math.isnan(easy)) else float("nan")
        rows.append((lang, str(len(group)), _pct(hard), _pct(easy), _pct(balanced)))
    return _table(("language", "n", "hard", "easy", "balanced"), rows)


def per_context(predictions: Sequence[Prediction], threshold: float) -> str:
    """Each held-out prompt plain and behind the evaluation's contexts (never seen in training)."""
    rows = []
    for variant in ("plain", *CONTEXT_KINDS):
        group = [p for p in predictions if p.variant == variant]
        if group:
            hard, easy = pooled(group, threshold)
            rows.append((_CONTEXT_NAMES[variant], _pct(hard), _pct(easy)))
    return _table(("context", "hard", "easy"), rows)


_CONTEXT_NAMES = {
    "plain": "plain",
    "persona": "behind a friendly bot persona and a greeting",
    "rules": "behind a rules-style system prompt",
    "conversation": "as the third turn of unrelated small talk",
}


def sweep(predictions: Sequence[Prediction], steps: Iterable[float] = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)) -> str:
    rows = []
    for t in steps:
        hard, easy = pooled(predictions, t)
        to_ar = sum(p.score >= t for p in predictions) / max(1, len(predictions))
        rows.append((f"{t:.2f}", _pct(hard), _pct(easy), _pct(to_ar)))
    return _table(("threshold", "hard recall", "easy recall", "sent to autoregressive"), rows)


def reliability(raw: Sequence[Prediction], calibrated_: Sequence[Prediction]) -> str:
    """Predicted score against the observed share of hard requests, in tenths of the score, before and
    after calibration; the class mix is that of the predictions given."""

    def bins(predictions: Sequence[Prediction]) -> list[tuple[int, float, float]]:
        out = []
        for k in range(10):
            lo, hi = k / 10, (k + 1) / 10
            group = [p for p in predictions if lo <= p.score < hi or (k == 9 and p.score == 1.0)]
            if group:
                mean = sum(p.score for p in group) / len(group)
                hard = sum(p.example.label == "hard" for p in group) / len(group)
                out.append((len(group), mean, hard))
            else:
                out.append((0, float("nan"), float("nan")))
        return out

    before, after = bins(raw), bins(calibrated_)
    rows = []
    for k in range(10):
        (n0, _, h0), (n1, m1, h1) = before[k], after[k]
        rows.append((f"{k / 10:.1f}-{(k + 1) / 10:.1f}", str(n0), _pct(h0), str(n1), _pct(m1), _pct(h1)))
    mix = Counter(p.example.label for p in calibrated_)
    share = mix["hard"] / max(1, sum(mix.values()))
    table = _table(
        (
            "score",
            "n (raw)",
            "hard share (raw)",
            "n (calibrated)",
            "mean score (calibrated)",
            "hard share (calibrated)",
        ),
        rows,
    )
    return f"{table}\n\nClass mix: {mix['hard']} hard, {mix['easy']} easy ({100 * share:.0f} % hard)."


def expected_calibration_error(predictions: Sequence[Prediction]) -> float:
    """The mean gap between score and observed hard share, over tenths of the score, weighted by count."""
    total = 0.0
    for k in range(10):
        group = [p for p in predictions if k / 10 <= p.score < (k + 1) / 10 or (k == 9 and p.score == 1.0)]
        if group:
            mean = sum(p.score for p in group) / len(group)
            hard = sum(p.example.label == "hard" for p in group) / len(group)
            total += len(group) * abs(mean - hard)
    return total / max(1, len(predictions))


def misrouted(predictions: Sequence[Prediction], threshold: float, limit: int = 50) -> list[Prediction]:
    """The predictions on the wrong side of the threshold, the most confidently wrong first."""
    wrong = [p for p in predictions if (p.score >= threshold) != (p.example.label == "hard")]
    return sorted(wrong, key=lambda p: -abs(p.score - threshold))[:limit]
