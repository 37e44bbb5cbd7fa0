"""The difficulty scorer: the probability that a request needs the autoregressive backend.

A logistic model over the binary features of ``gateway.routing.text``: the score of a request is
``sigmoid(bias + the sum of the weights of its features)``. The features are the newest user turn's, and
its context's (the system prompt and the previous user turns, see features.conversation) under a
``c:`` prefix, word pairs left out. The context has weights of its own, learned from the conversations in
the training data: a hard conversation stays hard on its follow-ups ("now prove the converse") and a
hard task stated in the system prompt counts, while a chatty persona in a bot's system prompt does not
make every turn hard. (Scoring the context with the turn's weights and keeping the higher score sent
most of a Telegram bot's small talk to the autoregressive backend: a system prompt reads like nothing a
user writes.)

The model is data (a gzip'd JSON file written by ``gateway router train``), loaded once at start-up; a
missing or corrupt file is a ``ModelError`` with the reason, never a silent fallback to another policy.
Scoring is pure and needs no third-party package (a few hundred dictionary look-ups per request).

Besides the weights of the features present, a model may hold **meaning** weights: one number per word
of a fixed vocabulary and per block (the newest turn's words ``w:``, the pasted material's ``p:``, the
context's ``c:w:``), and the logit adds, for each block, the MEAN of the numbers of its words present.
That is a linear function of the mean of the words' static vectors (training/fit.py), folded into one
number per word: a word no training source used still gets the weight its meaning earns, which is what
a new way of writing needs (issue 15: held out, small talk 89 -> 91 %, code in words 94 -> 96 %).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.errors import ModelError
from gateway.routing import model_file
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
    "parse_model",
    "request_features",
    "scorer_for",
]

FORMAT = "gateway-router/1"
DEFAULT_MODEL = model_file.SHIPPED  # the model shipped in gateway/routing/models/
# Context texts are read only this far: what a system prompt or an earlier turn says about the task is
# at its start, and the newest turn has its own, larger budget (text.HEAD_CHARS + TAIL_CHARS).
CONTEXT_CHARS = 1500
NO_CONTEXT = "c:none"  # a request with nothing before its newest turn
# The blocks of meaning weights, by the prefix of the word features they average over.
MEANING_BLOCKS = ("w:", "p:", "c:w:")
MEANING = "m:"  # the prefix of a meaning block's contribution in explanations ("m:w:")
CONTEXT_MEANING = MEANING + "c:"
# A block's mean counts this many words of weight 0 besides its own: the sum over (words + PRIOR).
# With a plain mean, a one-word turn was its word's weight, and single words have large ones
# (+-18 in the shipped model): "yes" alone scored 0.66 and "x" 0.99. Training uses the same (fit.py).
MEANING_PRIOR = 3


def request_features(newest: str, context: str) -> set[str]:
    """The features of a request: its newest turn's, and its context's under ``c:`` (see the module)."""
    own, from_context = _split_features(newest, context)
    own.update(from_context)
    return own


def _split_features(newest: str, context: str) -> tuple[set[str], set[str]]:
    """The newest turn's features and the context's, apart: each weight table is then intersected
    with the side it can hold (a context weight is never among the turn's features)."""
    if not context:
        return featurize(newest), {NO_CONTEXT}
    return featurize(newest), {"c:" + f for f in featurize(context[:CONTEXT_CHARS]) if not f.startswith("b:")}


@dataclass(frozen=True, slots=True)
class Contribution:
    feature: str  # as in the model: "w:prove", "b:how many", "s:numbers=4-6", "context"
    weight: float  # what it added to the logit (negative: towards easy)

    def as_dict(self) -> dict[str, object]:
        return {"feature": describe_feature(self.feature), "weight": round(self.weight, 3)}


@dataclass(frozen=True, slots=True)
class Difficulty:
    score: float  # in [0, 1]
    # What the context (system prompt, earlier turns) added to the logit; positive: it made it harder.
    context: float = 0.0
    top: tuple[Contribution, ...] = ()  # only when asked for (explain > 0)


@dataclass(frozen=True, slots=True)
class ScorerModel:
    weights: dict[str, float]
    bias: float
    threshold: float  # the threshold chosen by the evaluation at training time
    meta: dict[str, Any] = field(default_factory=dict)  # training sources, figures, date
    # Meaning weights by block prefix, then word: {"w:": {"deploy": 0.41, ...}, "p:": ..., "c:w:": ...}.
    meaning: dict[str, dict[str, float]] = field(default_factory=dict)
    # The weights split by what they read, the newest turn (and its pasted text) or the context, and the
    # meaning weights one table per block keyed by feature name ("w:deploy"). Scoring intersects each
    # table with the features of the side it reads (the turn's or the context's): a set operation in C
    # over the smaller side (the request's few hundred features), where a Python loop over them cost
    # ~40 µs of a long turn's 400 µs budget (issue 15). The sums are math.fsum, exact, so a request
    # scores the same whatever order the set iterates in (it changes with each process's hash seed).
    _own: dict[str, float] = field(init=False, repr=False, compare=False)
    _context: dict[str, float] = field(init=False, repr=False, compare=False)
    _blocks: tuple[dict[str, float], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        context = {f: w for f, w in self.weights.items() if f.startswith("c:")}
        own = {f: w for f, w in self.weights.items() if f not in context}
        blocks = tuple(
            {block + word: value for word, value in self.meaning.get(block, {}).items()}
            for block in MEANING_BLOCKS
        )
        object.__setattr__(self, "_own", own)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_blocks", blocks)

    def logit(self, features: set[str]) -> float:
        """The logit of a request's features (``request_features``: the turn's and the context's)."""
        own, context = self._sums(features, features)
        return self.bias + own + context

    def _sums(self, own_features: set[str], context_features: set[str]) -> tuple[float, float]:
        """What the newest turn's features and the context's add to the logit."""
        own = math.fsum(map(self._own.__getitem__, self._own.keys() & own_features))
        context = math.fsum(map(self._context.__getitem__, self._context.keys() & context_features))
        for block, value in self._meanings(own_features, context_features):
            if block.startswith(CONTEXT_MEANING):
                context += value
            else:
                own += value
        return own, context

    def _meanings(self, own_features: set[str], context_features: set[str]) -> list[tuple[str, float]]:
        """Each meaning block's contribution: the mean of the weights of its words present, shrunk
        towards 0 by MEANING_PRIOR words of weight 0."""
        out = []
        for block, table in zip(MEANING_BLOCKS, self._blocks, strict=True):
            hits = table.keys() & (context_features if block.startswith("c:") else own_features)
            if hits:
                mean = math.fsum(map(table.__getitem__, hits)) / (len(hits) + MEANING_PRIOR)
                out.append((MEANING + block, mean))
        return out

    def score(self, newest: str, context: str = "", *, explain: int = 0) -> Difficulty:
        """The request's difficulty; ``explain`` > 0 also lists that many features that pushed it most."""
        own_features, context_features = _split_features(newest, context)
        own, from_context = self._sums(own_features, context_features)
        value = _sigmoid(self.bias + own + from_context)
        if not explain:
            return Difficulty(value, from_context)
        weights = self.weights
        weighted = [(f, weights[f]) for f in weights.keys() & (own_features | context_features)]
        weighted.extend(self._meanings(own_features, context_features))
        top = sorted(weighted, key=lambda fw: (-abs(fw[1]), fw[0]))[:explain]
        return Difficulty(value, from_context, tuple(Contribution(f, w) for f, w in top))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "bias": self.bias,
            "threshold": self.threshold,
            "meta": self.meta,
            "weights": self.weights,
            **({"meaning": self.meaning} if self.meaning else {}),
        }

    def save(self, path: Path) -> None:
        path.write_bytes(model_file.encode(self.to_json()))


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def describe_feature(feature: str) -> str:
    """A feature name as a reader would say it: 'word "prove"', 'words "how many"', 'numbers=4-6',
    'context: word "puzzle"', 'no context'."""
    if feature == NO_CONTEXT:
        return "no context"
    if feature.startswith(MEANING):
        return {
            "w:": "meaning of the words",
            "p:": "meaning of the pasted text",
            "c:w:": "context: meaning of the words",
        }.get(feature.removeprefix(MEANING), feature)
    if feature.startswith("c:"):
        return "context: " + describe_feature(feature[2:])
    kind, _, value = feature.partition(":")
    if kind == "w":
        return f'word "{value}"'
    if kind == "b":
        return f'words "{value}"'
    if kind == "s":
        return value
    return feature


def scorer_for(settings: ScorerSettings) -> ScorerModel | None:
    """The model routing.scorer names, loaded now (start-up), or None when the scorer is off."""
    return load_model(settings.model) if settings.enabled else None


def load_model(name_or_path: str | Path = DEFAULT_MODEL) -> ScorerModel:
    """The shipped model (``"default"``) or a model file written by ``gateway router train``."""
    raw, label = model_file.read(name_or_path, "default.json.gz", "routing model")
    return parse_model(raw, label)


def parse_model(raw: bytes, label: str = "routing model") -> ScorerModel:
    data = model_file.decode(raw, label, FORMAT, " (see gateway router train)")
    weights = data.get("weights")
    if not isinstance(weights, dict) or not weights:
        raise ModelError(f"{label} holds no weights")
    try:
        parsed = {str(k): float(v) for k, v in weights.items()}
        bias, threshold = float(data["bias"]), float(data["threshold"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{label} is incomplete or malformed: {exc!r}") from exc
    if not all(math.isfinite(v) for v in (bias, threshold, *parsed.values())):
        raise ModelError(f"{label} holds a weight that is not a finite number")
    if not 0.0 < threshold < 1.0:
        raise ModelError(f"{label} has threshold {threshold}, out of range (0, 1)")
    meta = data.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    return ScorerModel(parsed, bias, threshold, meta, _meaning(data.get("meaning", {}), label))


def _meaning(raw: Any, label: str) -> dict[str, dict[str, float]]:
    """The meaning weights of a model file (absent in a model trained without them)."""
    if not isinstance(raw, dict) or not set(raw) <= set(MEANING_BLOCKS):
        raise ModelError(f"{label} has malformed meaning weights (blocks {', '.join(MEANING_BLOCKS)} only)")
    out: dict[str, dict[str, float]] = {}
    for block, table in raw.items():
        if not isinstance(table, dict):
            raise ModelError(f"{label} has malformed meaning weights for {block!r}")
        try:
            out[block] = {str(word): float(value) for word, value in table.items()}
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{label} has a meaning weight that is not a number: {exc}") from exc
        if not all(math.isfinite(v) for v in out[block].values()):
            raise ModelError(f"{label} holds a meaning weight that is not a finite number")
    return out
