"""Fitting the scorer: one logistic regression over ``gateway.routing.scorer.vector``'s features, then a
calibration fitted across held-out groups.

scikit-learn (a dependency of this package, not of the gateway) fits; the gateway only reads the model
file. Every example is also put behind one training context (a persona and a greeting, a rules-style
system prompt, or unrelated small talk), with its own label: the context then weighs what it should,
which is little, except where an earlier hard turn makes a follow-up hard.

The evaluation (``cross_validate``) holds out whole groups (a written group, a real collection, a
generator family) and scores them, plain and behind the evaluation's own contexts, with a model that
never saw them. Those held-out scores fit the calibration and choose the threshold, so the shipped
score means what it says on traffic the model has not seen.
"""

from __future__ import annotations

import math
import random
import time
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gateway.routing.features import conversation
from gateway.routing.scorer.model import ScorerModel
from gateway.routing.scorer.vector import BITS, FEATURE_SET, SHAPE_VALUE, RequestVector, vectorize
from gateway_training.corpus import CONTEXT_KINDS, Contexts, in_context
from gateway_training.sources import Example

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

__all__ = [
    "FitSettings",
    "Prediction",
    "balanced_accuracy",
    "calibrate",
    "choose_threshold",
    "cross_validate",
    "fit",
    "recall",
    "vector_of",
]

VARIANTS = ("plain", *CONTEXT_KINDS)


@dataclass(frozen=True, slots=True)
class FitSettings:
    c: float = 4.0  # inverse regularisation strength (chosen on the held-out figures, docs/scorer.md)
    seed: int = 7
    # Each example also enters the fit once behind a training context (0: never).
    context_copies: int = 1
    # Examples of an operator's own data weigh this much more than the built-in corpora, so that a few
    # hundred of them move the model.
    own_weight: float = 1.0
    # The parts of the features the fit uses (an ablation leaves some out): ngrams, text, shape, context.
    parts: frozenset[str] = frozenset({"ngrams", "text", "shape", "context"})


@dataclass(frozen=True, slots=True)
class Prediction:
    example: Example
    score: float  # calibrated, or the raw probability before calibration
    logit: float = 0.0  # uncalibrated
    variant: str = "plain"  # plain, or the evaluation context it was put behind


def vector_of(messages: Sequence[dict[str, Any]]) -> RequestVector:
    talk = conversation({"messages": list(messages)})
    return vectorize(talk.newest, talk.system, talk.earlier)


@dataclass(slots=True)
class _Rows:
    """Vectors and labels of the fit's rows, and the shape features seen, by column."""

    vectors: list[RequestVector] = field(default_factory=list)
    labels: list[bool] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    owners: list[int] = field(default_factory=list)  # the example each row came from


def _rows(
    examples: Sequence[Example],
    settings: FitSettings,
    contexts: Contexts | None,
    own: Callable[[Example], bool] = lambda e: False,
) -> _Rows:
    rng = random.Random(settings.seed)
    rows = _Rows()
    for i, example in enumerate(examples):
        weight = settings.own_weight if own(example) else 1.0
        variants = [example.messages]
        if contexts is not None:
            for _ in range(settings.context_copies):
                kind = rng.choice(CONTEXT_KINDS)
                variants.append(in_context(example.messages, contexts, kind, rng))
        for messages in variants:
            rows.vectors.append(vector_of(messages))
            rows.labels.append(example.label == "hard")
            rows.weights.append(weight)
            rows.owners.append(i)
    return rows


def _matrix(
    vectors: Sequence[RequestVector], shape_columns: dict[str, int], parts: frozenset[str]
) -> csr_matrix:
    import numpy as np
    from scipy.sparse import csr_matrix

    data: list[float] = []
    indices: list[int] = []
    pointers = [0]
    base = 1 << BITS
    chosen = [part for part in ("ngrams", "text", "context") if part in parts]
    for v in vectors:
        merged: dict[int, float] = {}
        for part in chosen:
            for bucket, value in getattr(v, part).items():
                merged[bucket] = merged.get(bucket, 0.0) + value
        indices += merged.keys()
        data += merged.values()
        for name in v.shape if "shape" in parts else ():
            column = shape_columns.get(name)
            if column is not None:
                indices.append(base + column)
                data.append(SHAPE_VALUE)
        pointers.append(len(indices))
    return csr_matrix(
        (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(pointers)),
        shape=(len(vectors), base + len(shape_columns)),
    )


def _fit_rows(rows: _Rows, settings: FitSettings, meta: dict[str, Any] | None = None) -> ScorerModel:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    if len(set(rows.labels)) < 2:
        raise ValueError("training needs both hard and easy examples")
    shaped = "shape" in settings.parts
    shape_names = sorted({name for v in rows.vectors for name in v.shape}) if shaped else []
    columns = {name: i for i, name in enumerate(shape_names)}
    x = _matrix(rows.vectors, columns, settings.parts)
    y = np.asarray(rows.labels)
    clf = LogisticRegression(
        C=settings.c, solver="liblinear", class_weight="balanced", max_iter=500, random_state=settings.seed
    )
    clf.fit(x, y, sample_weight=np.asarray(rows.weights))
    coef = clf.coef_[0]
    base = 1 << BITS
    weights = array("f", coef[:base].astype(np.float32).tobytes())
    shape = {name: float(coef[base + i]) for name, i in columns.items()}
    bias = float(clf.intercept_[0])
    bias = _fold_shape(shape, [v.shape for v in rows.vectors], bias)
    return ScorerModel(weights, shape, bias, feature_set=FEATURE_SET, meta=meta)


def _fold_shape(shape: dict[str, float], present: Sequence[frozenset[str]], bias: float) -> float:
    """Moves into the bias the weight of each shape group that every row has exactly one bucket of
    (``s:numbers=0``, ``=1``, ...): its most common bucket then weighs 0 and the others what they add
    over it. Scores are unchanged; explanations name only what departs from the common case."""
    groups: dict[str, Counter[str]] = {}
    for names in present:
        for name in names:
            group, sep, _ = name.partition("=")
            if sep:
                groups.setdefault(group, Counter())[name] += 1
    for counts in groups.values():
        if sum(counts.values()) != len(present) or any(
            sum(1 for n in names if n in counts) != 1 for names in present
        ):
            continue
        common = counts.most_common(1)[0][0]
        shift = shape.get(common, 0.0)
        bias += SHAPE_VALUE * shift
        for name in counts:
            shape[name] = shape.get(name, 0.0) - shift
    return bias


def fit(
    examples: Sequence[Example],
    settings: FitSettings,
    contexts: Contexts | None,
    *,
    calibration: tuple[float, float] = (1.0, 0.0),
    threshold: float = 0.5,
    meta: dict[str, Any] | None = None,
    own: Callable[[Example], bool] = lambda e: False,
) -> ScorerModel:
    """The model of ``examples`` (and of each behind a training context), with the calibration and the
    threshold the evaluation chose."""
    rows = _rows(examples, settings, contexts, own)
    info = {
        "trained": datetime.now(UTC).strftime("%Y-%m-%d"),
        "examples": len(examples),
        "c": settings.c,
        **(meta or {}),
    }
    model = _fit_rows(rows, settings, info)
    model.calibration = calibration
    model.threshold = threshold
    return model


def cross_validate(
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
) -> list[Prediction]:
    """Held-out predictions: the groups (``Example.unit``) dealt into ``folds`` folds at random (seeded);
    each fold's ``measured`` examples scored, plain and behind each evaluation context, by a model fitted
    on the other folds' ``trainable`` examples. Raw probabilities: ``calibrate`` maps them."""
    units = sorted({e.unit for e in examples})
    random.Random(settings.seed).shuffle(units)
    dealt = {unit: i % folds for i, unit in enumerate(units)}
    if len(units) < folds:
        # Fewer groups than folds (an operator's one file of labels): the examples are dealt instead.
        dealt = {}
        order = list(range(len(examples)))
        random.Random(settings.seed).shuffle(order)
        examples = [replace(e, group=f"row:{i}") for i, e in enumerate(examples)]
        dealt = {examples[i].unit: k % folds for k, i in enumerate(order)}
    rows = _rows(examples, settings, train_contexts, own)
    rng = random.Random(settings.seed + 1)
    tests: list[tuple[int, str, RequestVector]] = []
    for i, example in enumerate(examples):
        if not measured(example):
            continue
        tests.append((i, "plain", vector_of(example.messages)))
        if eval_contexts is not None:
            for kind in CONTEXT_KINDS:
                messages = in_context(example.messages, eval_contexts, kind, rng)
                tests.append((i, kind, vector_of(messages)))
    out: list[Prediction] = []
    started = time.monotonic()
    for k in range(folds):
        keep = [
            j
            for j, owner in enumerate(rows.owners)
            if dealt[examples[owner].unit] != k and trainable(examples[owner])
        ]
        sub = _Rows(
            [rows.vectors[j] for j in keep],
            [rows.labels[j] for j in keep],
            [rows.weights[j] for j in keep],
            [rows.owners[j] for j in keep],
        )
        model = _fit_rows(sub, settings)
        for i, variant, v in tests:
            if dealt[examples[i].unit] == k:
                logit = model.logit_of(_only(v, settings.parts))
                out.append(Prediction(examples[i], _sigmoid(logit), logit, variant))
        if progress is not None:
            progress(k + 1, folds, time.monotonic() - started)
    return out


def _only(v: RequestVector, parts: frozenset[str]) -> RequestVector:
    """``v`` with the parts an ablation leaves out emptied."""
    if len(parts) == 4:
        return v
    return RequestVector(
        v.ngrams if "ngrams" in parts else {},
        v.text if "text" in parts else {},
        v.context if "context" in parts else {},
        v.shape if "shape" in parts else frozenset(),
    )


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


def calibrate(predictions: Sequence[Prediction]) -> tuple[float, float]:
    """Platt scaling on held-out logits: ``(a, b)`` with ``P(hard) = sigmoid(a * logit + b)``."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    x = np.asarray([[p.logit] for p in predictions])
    y = np.asarray([p.example.label == "hard" for p in predictions])
    clf = LogisticRegression(C=1e6, solver="lbfgs").fit(x, y)
    return float(clf.coef_[0][0]), float(clf.intercept_[0])


def calibrated(predictions: Sequence[Prediction], calibration: tuple[float, float]) -> list[Prediction]:
    a, b = calibration
    return [Prediction(p.example, _sigmoid(a * p.logit + b), p.logit, p.variant) for p in predictions]


def recall(predictions: Sequence[Prediction], threshold: float, label: str) -> float:
    rows = [p for p in predictions if p.example.label == label]
    if not rows:
        return float("nan")
    right = sum((p.score >= threshold) == (label == "hard") for p in rows)
    return right / len(rows)


def balanced_accuracy(predictions: Sequence[Prediction], threshold: float) -> float:
    return (recall(predictions, threshold, "hard") + recall(predictions, threshold, "easy")) / 2


def choose_threshold(predictions: Sequence[Prediction]) -> float:
    """The threshold (in hundredths) with the best balanced accuracy, the mean of the hard and the easy
    recall: a hard request on the diffusion backend is a wrong answer, an easy one on the
    autoregressive backend a slow one, and both matter. Ties go to the one nearest 0.5."""
    values = {step / 100: balanced_accuracy(predictions, step / 100) for step in range(5, 96)}
    best = max(values.values())
    return min((t for t, v in values.items() if v >= best - 1e-12), key=lambda t: abs(t - 0.5))
