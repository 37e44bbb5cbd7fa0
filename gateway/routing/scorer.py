"""The difficulty scorer: the probability that a request needs the autoregressive backend.

A logistic model over the binary features of ``gateway.routing.text``: the score of a text is
``sigmoid(bias + sum of the weights of its features)``. A request is scored twice, once on its newest turn
and once on its context (system prompt and the previous user turns), and keeps the higher of the turn's
score and the context's score times ``context_weight``, so that a hard conversation stays hard on its
follow-ups ("now prove the converse") and a hard task stated in the system prompt counts, but weighs
below the newest turn.

The model is data (a gzip'd JSON file written by ``gateway router train``), loaded once at start-up; a
missing or corrupt file is a ``ModelError`` with the reason, never a silent fallback to another policy.
Scoring is pure and needs no third-party package (a few hundred dictionary look-ups per request).
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from gateway.routing.settings import ScorerSettings
from gateway.routing.text import featurize

__all__ = [
    "DEFAULT_MODEL",
    "FORMAT",
    "Contribution",
    "Difficulty",
    "ModelError",
    "ScorerModel",
    "describe_feature",
    "load_model",
    "scorer_for",
]

FORMAT = "gateway-router/1"
DEFAULT_MODEL = "default"  # the model shipped in gateway/routing/models/
# Context texts are read only this far: what a system prompt or an earlier turn says about the task is
# at its start, and the newest turn has its own, larger budget (text.HEAD_CHARS + TAIL_CHARS).
CONTEXT_CHARS = 1500


class ModelError(Exception):
    """A scorer model file that cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class Contribution:
    feature: str  # as in the model: "w:prove", "b:how many", "s:numbers=4-6", "context"
    weight: float  # what it added to the logit (negative: towards easy)

    def as_dict(self) -> dict[str, object]:
        return {"feature": describe_feature(self.feature), "weight": round(self.weight, 3)}


@dataclass(frozen=True, slots=True)
class Difficulty:
    score: float  # in [0, 1]
    part: Literal["turn", "context"]  # which part of the request gave the score
    top: tuple[Contribution, ...] = ()  # only when asked for (explain=True)


@dataclass(frozen=True, slots=True)
class ScorerModel:
    weights: dict[str, float]
    bias: float
    threshold: float  # the threshold chosen by the evaluation at training time
    context_weight: float = 0.9
    meta: dict[str, Any] = field(default_factory=dict)  # training sources, figures, date

    def logit(self, features: set[str]) -> float:
        get = self.weights.get
        return self.bias + sum(get(f, 0.0) for f in features)

    def text_score(self, text: str) -> float:
        return _sigmoid(self.logit(featurize(text)))

    def score(self, newest: str, context: str = "", *, explain: int = 0) -> Difficulty:
        """The request's difficulty; ``explain`` > 0 also lists that many features that pushed it most."""
        features = featurize(newest)
        turn = _sigmoid(self.logit(features))
        ctx_features: set[str] = set()
        part: Literal["turn", "context"] = "turn"
        value = turn
        if context:
            ctx_features = featurize(context[:CONTEXT_CHARS])
            ctx = self.context_weight * _sigmoid(self.logit(ctx_features))
            if ctx > turn:
                part, value = "context", ctx
        if not explain:
            return Difficulty(value, part)
        chosen = features if part == "turn" else ctx_features
        top = sorted(
            (Contribution(f, w) for f in chosen if (w := self.weights.get(f, 0.0)) != 0.0),
            key=lambda c: -abs(c.weight),
        )[:explain]
        if part == "context":
            top = [Contribution("context", math.log(self.context_weight)), *top]
        return Difficulty(value, part, tuple(top))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "bias": self.bias,
            "threshold": self.threshold,
            "context_weight": self.context_weight,
            "meta": self.meta,
            "weights": self.weights,
        }

    def save(self, path: Path) -> None:
        data = json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        # mtime=0: the same model gives the same bytes (reproducible training).
        path.write_bytes(gzip.compress(data.encode(), compresslevel=9, mtime=0))


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def describe_feature(feature: str) -> str:
    """A feature name as a reader would say it: 'word "prove"', 'words "how many"', 'numbers=4-6'."""
    kind, _, value = feature.partition(":")
    if kind == "w":
        return f'word "{value}"'
    if kind == "b":
        return f'words "{value}"'
    if kind == "s":
        return value
    return feature  # "context"


def scorer_for(settings: ScorerSettings) -> ScorerModel | None:
    """The model routing.scorer names, loaded now (start-up), or None when the scorer is off."""
    return load_model(settings.model) if settings.enabled else None


def load_model(name_or_path: str | Path = DEFAULT_MODEL) -> ScorerModel:
    """The shipped model (``"default"``) or a model file written by ``gateway router train``."""
    if str(name_or_path) == DEFAULT_MODEL:
        resource = resources.files("gateway.routing").joinpath("models", "default.json.gz")
        label = "the shipped routing model (gateway/routing/models/default.json.gz)"
        try:
            raw = resource.read_bytes()
        except OSError as exc:
            raise ModelError(f"{label} is missing from the installation: {exc}") from exc
    else:
        path = Path(name_or_path)
        label = f"routing model {path}"
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ModelError(f"cannot read {label}: {exc.strerror or exc}") from exc
    return parse_model(raw, label)


def parse_model(raw: bytes, label: str = "routing model") -> ScorerModel:
    try:
        data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    except (OSError, EOFError, ValueError) as exc:
        raise ModelError(f"{label} is not a gzip'd JSON model file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ModelError(f"{label} has format {found!r}; expected {FORMAT!r} (see gateway router train)")
    weights = data.get("weights")
    if not isinstance(weights, dict) or not weights:
        raise ModelError(f"{label} holds no weights")
    try:
        parsed = {str(k): float(v) for k, v in weights.items()}
        bias, threshold = float(data["bias"]), float(data["threshold"])
        context_weight = float(data.get("context_weight", 0.9))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{label} is incomplete or malformed: {exc!r}") from exc
    if not all(math.isfinite(v) for v in (bias, threshold, context_weight, *parsed.values())):
        raise ModelError(f"{label} holds a weight that is not a finite number")
    if not 0.0 < threshold < 1.0 or not 0.0 < context_weight <= 1.0:
        raise ModelError(f"{label} has threshold {threshold} or context_weight {context_weight} out of range")
    meta = data.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    return ScorerModel(parsed, bias, threshold, context_weight, meta)
