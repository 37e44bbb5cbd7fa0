"""The difficulty scorer's model: the probability that a request needs the autoregressive backend.

Logistic models over the binary features of ``text``, one head or several (``ScorerModel``: the score
is the hard heads' share of their probabilities); the sum of each block of words is damped on a long
text (``blocks.damping``). It reads the newest user turn, and its context (``features.conversation``,
the first ``blocks.CONTEXT_CHARS`` characters) with weights of its own, so that a system prompt's
persona does not make every turn hard. Optional **meaning** weights, one number per word and block,
add the mean over the words present: a word no training source used still gets the weight its meaning
earns. The model is data (a gzip'd JSON file, ``load``), loaded once at start-up; scoring is pure and
needs no third-party package (docs/scorer.md).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.errors import ModelError
from gateway.routing.scorer import model_file
from gateway.routing.scorer import weights as tables
from gateway.routing.scorer.blocks import (
    DAMPED,
    NO_CONTEXT,
    TABLES,
    Blocks,
    damping,
    split_blocks,
    split_features,
    table_of,
)

__all__ = [
    "DEFAULT_MODEL",
    "FORMAT",
    "FORMAT_HEADS",
    "ONE_HEAD",
    "Contribution",
    "Difficulty",
    "Head",
    "ModelError",
    "ScorerModel",
    "describe_feature",
]

FORMAT = "gateway-router/1"  # one head
FORMAT_HEADS = "gateway-router/2"  # several heads (ScorerModel)
DEFAULT_MODEL = model_file.SHIPPED  # the model shipped in gateway/routing/scorer/models/
# The blocks of meaning weights, by the prefix of the word features they average over.
MEANING_BLOCKS = ("w:", "p:", "c:w:")
MEANING = "m:"  # the prefix of a meaning block's contribution in explanations ("m:w:")
CONTEXT_MEANING = MEANING + "c:"
# A block's mean counts this many words of weight 0 besides its own: the sum over (words + PRIOR).
# With a plain mean, a one-word turn was its word's weight, and single words have large ones
# (+-18 in the shipped model): "yes" alone scored 0.66 and "x" 0.99. Training uses the same (fit.py).
MEANING_PRIOR = 3


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
class Head:
    """One linear model of a scorer: the logit that a request is of its group of training categories."""

    name: str  # "reasoning and maths", "code", "small talk", "other easy"; "hard" for a one-head model
    hard: bool  # whether its group belongs on the autoregressive backend


# A model of one head is a plain logistic regression, hard against easy (format 1, and what a model
# trained on hard/easy labels alone is).
ONE_HEAD = (Head("hard", True),)


class ScorerModel:
    """A scorer's heads and their weights, and the threshold the evaluation chose.

    With one head the score is ``sigmoid(logit)``. With several (one per group of training categories,
    each fitted one-against-the-rest), it is the hard heads' share of the heads' probabilities,
    ``sum(p hard) / sum(p)``: a request needs only look like one hard group, whatever the easy ones say
    of it (a sum of linear parts cannot say "numbers AND feelings is small talk, numbers alone a word
    problem"; a mixture of heads can).

    Each table (the turn's features, the context's, each meaning block's words keyed by their feature
    name) is a dict from a feature to its weights packed in one integer (``weights.py``): scoring intersects
    a dict with the features of the side it reads (a set operation in C over the request's few hundred
    features) and sums the packed values found, every head at once and exactly (the same score whatever
    order a set iterates in, which changes with each process's hash seed).
    """

    __slots__ = ("_blocks", "_hard", "_tables", "bias", "damping", "heads", "meta", "threshold")

    def __init__(
        self,
        weights: Mapping[str, float | Sequence[float]],
        bias: float | Sequence[float],
        threshold: float,
        meta: dict[str, Any] | None = None,
        meaning: Mapping[str, Mapping[str, float | Sequence[float]]] | None = None,
        heads: Sequence[Head] = ONE_HEAD,
        damping: float | None = None,
    ) -> None:
        """Weights by feature (a number per head, or one number for a one-head model); meaning weights
        by block, then word, likewise. (``from_columns`` takes the same as one column per head.)"""
        k = len(heads)

        def columns(table: Mapping[str, float | Sequence[float]]) -> tables.Columns:
            out: list[list[float]] = [[] for _ in range(k)]
            for name, value in table.items():
                for column, v in zip(out, tables.per_head(value, k, name), strict=True):
                    column.append(v)
            return list(table), out

        self._setup(
            heads,
            bias,
            threshold,
            meta,
            columns(weights),
            {b: columns(t) for b, t in (meaning or {}).items()},
            damping,
        )

    @classmethod
    def from_columns(
        cls,
        weights: tables.Columns,
        bias: float | Sequence[float],
        threshold: float,
        meta: dict[str, Any] | None = None,
        meaning: Mapping[str, tables.Columns] | None = None,
        heads: Sequence[Head] = ONE_HEAD,
        damping: float | None = None,
    ) -> ScorerModel:
        """The model of features and, per head, a column of their weights (and per meaning block, its
        words and a column per head): what training and a format-2 file hold, without a tuple per row."""
        model = cls.__new__(cls)
        model._setup(heads, bias, threshold, meta, weights, meaning or {}, damping)
        return model

    def _setup(
        self,
        heads: Sequence[Head],
        bias: float | Sequence[float],
        threshold: float,
        meta: dict[str, Any] | None,
        weights: tables.Columns,
        meaning: Mapping[str, tables.Columns],
        damping: float | None,
    ) -> None:
        self.heads = tuple(heads)
        self.bias = tables.per_head(bias, len(self.heads), "bias")
        self.threshold = threshold
        self.meta = meta if meta is not None else {}
        self.damping = damping or None  # words per block from which its sum is damped (``damping``)
        table = tables.table(*weights, len(self.heads), "weights")
        self._tables: dict[str, dict[str, int]] = {name: {} for name in TABLES}
        for feature, packed in table.items():
            self._tables[table_of(feature)][feature] = packed
        self._blocks: dict[str, dict[str, int]] = {}
        for block, (words, values) in meaning.items():
            self._blocks[block] = tables.table([block + w for w in words], values, len(self.heads), block)
        self._hard = tuple(h.hard for h in self.heads)

    # ---- reading ---------------------------------------------------------------------------------

    @property
    def feature_count(self) -> int:
        return sum(map(len, self._tables.values()))

    @property
    def meaning_count(self) -> int:
        """Meaning weights per head: words x blocks."""
        return sum(map(len, self._blocks.values()))

    def finite(self) -> bool:
        """Whether the bias is finite (the tables refuse NaN and infinity as they are packed)."""
        return all(map(math.isfinite, self.bias))

    def weights_of(self, feature: str) -> tuple[float, ...]:
        """A feature's weight in each head (zeros for a feature the model does not know)."""
        packed = self._tables[table_of(feature)].get(feature)
        return (0.0,) * len(self.heads) if packed is None else tables.unpack(packed, len(self.heads))

    def meaning_of(self, block: str, word: str) -> tuple[float, ...] | None:
        packed = self._blocks.get(block, {}).get(block + word)
        return None if packed is None else tables.unpack(packed, len(self.heads))

    # ---- scoring ---------------------------------------------------------------------------------

    def logit(self, features: set[str]) -> float:
        """The decisive logit of a request's features (``request_features``: the turn's and the
        context's): a one-head model's logit; with several heads, the leading hard head's logit less
        the leading easy head's."""
        own, context = self._sums(split_blocks(features))
        return self._margin([b + o + c for b, o, c in zip(self.bias, own, context, strict=True)])[0]

    def _factor(self, table: str, size: int) -> float:
        return damping(size, self.damping) if table in DAMPED else 1.0

    def _sums(self, blocks: Blocks) -> tuple[list[float], list[float]]:
        """What the newest turn's features and the context's add to each head's logit."""
        k = len(self.heads)
        own, context = [0.0] * k, [0.0] * k
        # The tables read at full weight are summed packed, side by side, and unpacked once per side:
        # a short turn, whose blocks are not damped, costs what one table did.
        packed, count = [0, 0], [0, 0]
        for name, table in self._tables.items():
            features = blocks[name]
            hits = table.keys() & features if features else None
            if not hits:
                continue
            side = 1 if name[0] == "c" else 0
            factor = self._factor(name, len(features))
            total = sum(map(table.__getitem__, hits))
            if factor == 1.0:
                packed[side] += total
                count[side] += len(hits)
            else:
                sums = context if side else own
                for i, v in enumerate(tables.unpack(total, k, len(hits))):
                    sums[i] += v * factor
        for side, sums in enumerate((own, context)):
            if count[side]:
                for i, v in enumerate(tables.unpack(packed[side], k, count[side])):
                    sums[i] += v
        for block, values in self._meanings(blocks):
            sums = context if block.startswith(CONTEXT_MEANING) else own
            for i, v in enumerate(values):
                sums[i] += v
        return own, context

    def _meanings(self, blocks: Blocks) -> list[tuple[str, list[float]]]:
        """Each meaning block's contribution to each head: the mean of the weights of its words present,
        shrunk towards 0 by MEANING_PRIOR words of weight 0."""
        out = []
        for block, table in self._blocks.items():
            hits = table.keys() & blocks[block]
            if hits:
                values = tables.sum_of(table, hits, len(self.heads))  # hits: already intersected
                out.append((MEANING + block, [v / (len(hits) + MEANING_PRIOR) for v in values]))
        return out

    def _margin(self, logits: list[float]) -> tuple[float, int, int]:
        """The decisive logit and the heads it compares (the same head twice for a one-head model)."""
        if len(logits) == 1:
            return logits[0], 0, 0
        hard = max((k for k in range(len(logits)) if self._hard[k]), key=logits.__getitem__)
        easy = max((k for k in range(len(logits)) if not self._hard[k]), key=logits.__getitem__)
        return logits[hard] - logits[easy], hard, easy

    def _probability(self, logits: list[float]) -> float:
        if len(logits) == 1:
            return _sigmoid(logits[0])
        p = [_sigmoid(z) for z in logits]
        hard = math.fsum(v for v, h in zip(p, self._hard, strict=True) if h)
        return hard / math.fsum(p)

    def score(self, newest: str, context: str = "", *, explain: int = 0) -> Difficulty:
        """The request's difficulty; ``explain`` > 0 also lists that many features that pushed it most
        (on the decisive logit: towards the leading hard head, or the leading easy one)."""
        blocks = split_features(newest, context)
        own, from_context = self._sums(blocks)
        logits = [b + o + c for b, o, c in zip(self.bias, own, from_context, strict=True)]
        value = self._probability(logits)
        _, hard, easy = self._margin(logits)

        def on_margin(values: Sequence[float]) -> float:  # a one-head model compares its head with 0
            return values[hard] - (0.0 if hard == easy else values[easy])

        if not explain:
            return Difficulty(value, on_margin(from_context))
        weighted = []
        for name, table in self._tables.items():
            factor = self._factor(name, len(blocks[name]))
            weighted += [
                (f, on_margin(tables.unpack(table[f], len(self.heads))) * factor)
                for f in table.keys() & blocks[name]
            ]
        for block, values in self._meanings(blocks):
            weighted.append((block, on_margin(values)))
        top = sorted(weighted, key=lambda fw: (-abs(fw[1]), fw[0]))[:explain]
        return Difficulty(value, on_margin(from_context), tuple(Contribution(f, w) for f, w in top))

    # ---- writing ---------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Format 1 for a one-head model (as every earlier model file: a number per feature and word),
        format 2 for several heads: per table, its features (words) and one column of weights per head
        (``weights.columns_of``)."""
        features = sorted(itertools.chain.from_iterable(t.items() for t in self._tables.values()))
        if len(self.heads) == 1:
            data: dict[str, Any] = {
                "format": FORMAT,
                "bias": self.bias[0],
                "weights": {f: tables.unpack(v, 1)[0] for f, v in features},
            }
            if self._blocks:
                data["meaning"] = {
                    block: {key[len(block) :]: tables.unpack(v, 1)[0] for key, v in table.items()}
                    for block, table in self._blocks.items()
                }
        else:
            data = {
                "format": FORMAT_HEADS,
                "heads": [{"name": h.name, "hard": h.hard} for h in self.heads],
                "bias": list(self.bias),
                "weights": tables.columns_json(features, len(self.heads)),
            }
            if self._blocks:
                data["meaning"] = {
                    block: tables.columns_json(
                        [(k[len(block) :], v) for k, v in table.items()], len(self.heads)
                    )
                    for block, table in self._blocks.items()
                }
        if self.damping:
            data["damping"] = self.damping
        return {**data, "threshold": self.threshold, "meta": self.meta}

    def save(self, path: Path) -> None:
        path.write_bytes(model_file.encode(self.to_json()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScorerModel) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable-looking tables: compared, never hashed


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
