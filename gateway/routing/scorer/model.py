"""The difficulty scorer: the calibrated probability that a request needs the autoregressive backend.

One logistic regression over ``vector.vectorize``'s features: ``logit = bias + w . x``, then a
calibration fitted on scores of sources each model never saw, ``p = sigmoid(a * logit + b)``, so that a
score of 0.7 means that about 70 % of such requests were hard in the evaluation (its class mix is in the
model card). The model is data, loaded once at start-up (``load.py``); scoring is pure Python over an
``array`` of weights, with no third-party package.

An explanation lists the features that pushed the score most, grouped by what they stand for (a word of
the turn with its character n-grams, a word pair, a shape feature, the system prompt, the earlier
turns). The bias is never among them, and neither is an always-present shape bucket: training folds
each shape group that every request has exactly one bucket of into the bias, so a shape feature shows
only where it departs from the common case.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gateway.routing.scorer.vector import (
    BITS,
    FEATURE_SET,
    SHAPE_VALUE,
    RequestVector,
    ScoreCache,
    dot,
    vectorize,
)

__all__ = ["Contribution", "Difficulty", "ScorerModel"]


@dataclass(frozen=True, slots=True)
class Contribution:
    feature: str  # what it stands for: '"twice"', '"how many"', "shape numbers=4-6", "system prompt"
    weight: float  # what it added to the calibrated logit (negative: towards easy)

    def as_dict(self) -> dict[str, object]:
        return {"feature": self.feature, "weight": round(self.weight, 3)}


@dataclass(frozen=True, slots=True)
class Difficulty:
    score: float  # in [0, 1], calibrated
    # What the context (system prompt, earlier turns) added to the calibrated logit; > 0: harder.
    context: float = 0.0
    top: tuple[Contribution, ...] = ()  # only when asked for (explain > 0)


class ScorerModel:
    """Weights by hashed bucket (``scale`` times ``weights``, ``2**BITS`` of them) and by shape feature, a
    bias, the calibration ``(a, b)`` and the threshold the evaluation chose.

    A model file holds its bucket weights as 16-bit integers and a scale; they are kept so (2 MB) and
    scaled once per block's sum, where a float per weight took 4 MB and a list of a million floats
    while loading, which the process kept as fragmented heap.
    """

    __slots__ = (
        "_cache",
        "bias",
        "calibration",
        "feature_set",
        "meta",
        "scale",
        "shape",
        "threshold",
        "weights",
    )

    def __init__(
        self,
        weights: array[float] | array[int],
        shape: Mapping[str, float],
        bias: float,
        *,
        scale: float = 1.0,
        calibration: tuple[float, float] = (1.0, 0.0),
        threshold: float = 0.5,
        feature_set: str = FEATURE_SET,
        meta: dict[str, Any] | None = None,
        compiled: bool = True,
    ) -> None:
        if len(weights) != 1 << BITS:
            raise ValueError(f"expected {1 << BITS} weights, got {len(weights)}")
        self.weights = weights  # not changed once the model is built: sums of them are kept (ScoreCache)
        self.scale = scale
        # ``compiled``: score through the compiled kernel where it was built (the same scores; False
        # keeps the pure-Python reference, which the kernel's tests compare it with).
        self._cache = ScoreCache(weights, compiled=compiled)
        self.shape = dict(shape)
        self.bias = bias
        self.calibration = calibration
        self.threshold = threshold
        self.feature_set = feature_set
        self.meta = meta or {}

    def logit_of(self, v: RequestVector) -> float:
        """The uncalibrated logit of a request's features (what training fits)."""
        return self._raw(v) + self._dot(v.context)

    def score(self, newest: str, system: str = "", earlier: str = "", *, explain: int = 0) -> Difficulty:
        """The request's difficulty; ``explain`` > 0 also lists that many contributions that pushed it
        most, largest first."""
        a, b = self.calibration
        if not explain:
            turn, context, shape = dot(self.weights, newest, system, earlier, self._cache)
            turn, context = turn * self.scale, context * self.scale
            logit = a * (self.bias + turn + self._shape(shape) + context) + b
            return Difficulty(_sigmoid(logit), a * context)
        v = vectorize(newest, system, earlier, explain=True)
        context = self._dot(v.context)
        score = _sigmoid(a * (self._raw(v) + context) + b)
        if v.labels is None:
            return Difficulty(score, a * context)
        grouped: dict[str, float] = {}
        w, scaled = self.weights, a * self.scale
        for part in v.parts():
            for bucket, value in part.items():
                label = v.labels[bucket]
                grouped[label] = grouped.get(label, 0.0) + scaled * w[bucket] * value
        for name in v.shape:
            weight = self.shape.get(name, 0.0)
            if weight:
                kind, _, what = name.partition(":")
                label = "pasted shape " + what if kind == "ps" else "shape " + what
                grouped[label] = a * weight * SHAPE_VALUE
        top = sorted(grouped.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:explain]
        return Difficulty(score, a * context, tuple(Contribution(f, x) for f, x in top if x))

    def _raw(self, v: RequestVector) -> float:
        """The bias and the newest turn's part of the logit."""
        return self.bias + self._dot(v.ngrams) + self._dot(v.text) + self._shape(v.shape)

    def _shape(self, names: frozenset[str]) -> float:
        # fsum: rounded once, so the same in any order; a set's order differs with the process's hash
        # seed and with how the set was built (the compiled kernel builds it from a list).
        return SHAPE_VALUE * math.fsum(map(self.shape.get, names, itertools.repeat(0.0, len(names))))

    def _dot(self, part: dict[int, float]) -> float:
        w = self.weights
        return self.scale * sum(w[bucket] * value for bucket, value in part.items())

    def finite(self) -> bool:
        values = [self.bias, self.scale, *self.calibration, *self.shape.values()]
        return all(map(math.isfinite, values)) and all(map(math.isfinite, self.weights))


def _sigmoid(logit: float) -> float:
    return 1.0 / (1.0 + math.exp(-logit)) if logit > -700 else 0.0
