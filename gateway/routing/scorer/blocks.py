"""A request's features by the scorer's weight table, and the damping of its blocks of words.

The scorer (``scorer.ScorerModel``) keeps one weight table per block of a request's features and
intersects each table with its own block; training (``training/gateway_training/fit.py``) reads the
same features as one set (``request_features``) and splits them by ``table_of``, so both see the same
blocks and the same sizes. The newest turn's words, word pairs and pasted words, and the context's
words, are the blocks a model trained with damping damps on a long text (``damping``).
"""

from __future__ import annotations

import itertools
import math

from gateway.routing.scorer.text import featurize_blocks

__all__ = [
    "CONTEXT_CHARS",
    "DAMPED",
    "NO_CONTEXT",
    "TABLES",
    "Blocks",
    "damping",
    "request_features",
    "split_blocks",
    "split_features",
    "table_of",
]

# Context texts are read only this far: what a system prompt or an earlier turn says about the task is
# at its start, and the newest turn has its own, larger budget (text.HEAD_CHARS + TAIL_CHARS).
CONTEXT_CHARS = 1500
NO_CONTEXT = "c:none"  # a request with nothing before its newest turn

# The weight tables, by the features they hold: the newest turn's words, word pairs, pasted words and
# shape; the context's words, and the rest of the context. Each table is intersected with its own
# block of a request's features, and the word blocks are damped on a long text (``damping``).
TABLES = ("w:", "b:", "p:", "s:", "c:w:", "c:")
DAMPED = frozenset({"w:", "b:", "p:", "c:w:"})
Blocks = dict[str, set[str]]


def table_of(feature: str) -> str:
    """The table (the block of a request's features) a feature belongs to."""
    if feature.startswith("c:"):
        return "c:w:" if feature.startswith("c:w:") else "c:"
    kind = feature[:2]
    return kind if kind in ("w:", "b:", "p:") else "s:"


def damping(size: int, words: float | None) -> float:
    """What the sum of a word block's weights is multiplied by: 1 up to ``words`` distinct words (or
    pairs) in the block, then sqrt(words / size). Summed undamped, the more words a text has the further
    they push it, while its shape and its request count once: a German text to summarise, sharing many
    words with German puzzles, scores as a puzzle (docs/scorer.md). ``words`` None or 0: no damping (a model
    trained before it)."""
    return 1.0 if not words or size <= words else math.sqrt(words / size)


def request_features(newest: str, context: str) -> set[str]:
    """The features of a request: its newest turn's, and its context's under ``c:`` (``scorer``)."""
    return set().union(*split_features(newest, context).values())


def split_blocks(features: set[str]) -> Blocks:
    """A request's features (``request_features``) by table, as ``split_features`` gives them."""
    out: Blocks = {name: set() for name in TABLES}
    for feature in features:
        out[table_of(feature)].add(feature)
    return out


def split_features(newest: str, context: str) -> Blocks:
    """The newest turn's features and the context's, by table: each weight table is intersected with
    the block it can hold (a context weight is never among the turn's features)."""
    own = featurize_blocks(newest)
    if context:
        theirs = featurize_blocks(context[:CONTEXT_CHARS])  # the context's word pairs are not read
        words = set(map("c:".__add__, theirs.words))
        rest = set(map("c:".__add__, itertools.chain(theirs.pasted, theirs.shape)))
    else:
        words, rest = set(), {NO_CONTEXT}
    return {"w:": own.words, "b:": own.pairs, "p:": own.pasted, "s:": own.shape, "c:w:": words, "c:": rest}
