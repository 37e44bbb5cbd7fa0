"""Fitting the scorer: a logistic regression over the features of ``gateway.routing.scorer.text``.

scikit-learn (a dependency of this package, not of the gateway) does the fitting: its liblinear solver
is exact, deterministic for a given seed, and fits tens of thousands of sparse rows in about a second on
one core; the gateway itself only reads the weights it produces. The evaluation that picks the threshold
is leave-one-source-out: a source's examples are scored by a model that never saw that source, which
is what a new user's traffic looks like to the shipped model.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gateway.routing.features import conversation
from gateway.routing.scorer.blocks import DAMPED, damping, request_features, table_of
from gateway.routing.scorer.linear import (
    MEANING_BLOCKS,
    MEANING_PRIOR,
    ONE_HEAD,
    Head,
    ScorerModel,
)
from gateway_training.sources import Example
from gateway_training.vectors import WordVectors, load_word_vectors

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "GROUPS",
    "FitSettings",
    "Prediction",
    "choose_threshold",
    "fit",
    "group_of",
    "leave_one_source_out",
    "meaning_matrix",
    "predict",
]


@dataclass(frozen=True, slots=True)
class FitSettings:
    c: float = 0.5  # inverse regularisation strength (chosen by the leave-one-source-out figures)
    min_count: int = 2  # a feature seen in fewer examples is dropped (noise, and model size)
    seed: int = 0
    prune: float = 0.005  # weights smaller than this are left out of the model file
    # The structure features of the newest turn (s:, ps:) enter the fit with this value instead of 1,
    # which under the same L2 penalty lets their weights grow larger than the words': the shape of a
    # request carries over to a way of writing no training source used, the words of one source do
    # not. Chosen by the leave-one-source-out figures (docs/history/measurements.md). The stored weights are
    # multiplied back, so the gateway still sums the weights of the features present.
    structure_scale: float = 2.0
    # The meaning features (the mean of the static vectors of each block's words, scorer/linear.py) enter the
    # fit multiplied by this; 0 leaves them out. A mean of unit vectors is short, so under the shared
    # L2 penalty it needs a scale of this order to weigh at all. Chosen by the leave-one-source-out
    # figures (docs/history/measurements.md).
    meaning_scale: float = 12.0
    # One head per group of categories (GROUPS), each fitted one-against-the-rest, the score their hard
    # share (scorer.ScorerModel); False: one head, hard against easy. Data whose groups are one hard and
    # one easy (labels alone, as an operator's) gets one head either way: two heads fitted on opposite
    # labels are the same model with opposite signs, and their share is the one head's probability.
    heads: bool = True
    # The sums of the word blocks (the turn's words, pairs, pasted words, the context's words) are damped
    # beyond this many distinct ones in the block (blocks.damping); 0: not damped. Chosen by the held-out
    # figures: 15 and 30 do best, and 15 keeps more small talk on diffusion (docs/history/measurements.md).
    damping: float = 15.0
    # A head's C is ``c`` times its factor here (1 for a head not listed). The small-talk head's sources
    # are the most varied ways of writing of any group (real chit-chat, diaries, a bot's regulars, musings,
    # talk about technology), so the words of any one of them say least about the next: under a stronger
    # penalty the head leans on what they share (the register, the meaning weights, the shape). Chosen by
    # the held-out figures (docs/history/measurements.md).
    head_c: tuple[tuple[str, float], ...] = (("small talk", 0.25),)

    def __post_init__(self) -> None:
        heads = {*GROUPS.values(), "other hard", "other easy", ONE_HEAD[0].name}
        for name, factor in self.head_c:
            if name not in heads or not factor > 0:
                raise ValueError(
                    f"head_c: {name!r} x {factor!r}: a head ({', '.join(sorted(heads))}), above 0"
                )


# The groups of training categories a model has a head for: a request needs only look like one hard
# group, whatever the easy ones say of it (gateway/routing/scorer/linear.py). A category not listed, or listed
# with the other label, is "other hard" or "other easy" by its label.
GROUPS = {
    "reasoning": "reasoning and maths",
    "math-word": "reasoning and maths",
    "math": "reasoning and maths",
    "code": "code",
    "smalltalk": "small talk",
    "factual": "other easy",
    "transform": "other easy",
    "writing": "other easy",
    "advice": "other easy",
}
_HARD_GROUPS = {"reasoning and maths", "code", "other hard"}


def group_of(example: Example) -> str:
    group = GROUPS.get(example.category)
    if group is None or (group in _HARD_GROUPS) != (example.label == "hard"):
        return "other hard" if example.label == "hard" else "other easy"
    return group


@dataclass(frozen=True, slots=True)
class Prediction:
    example: Example
    score: float


def _features(example: Example) -> set[str]:
    talk = conversation({"messages": example.messages})
    return request_features(talk.newest, talk.context)


def meaning_matrix(rows: Sequence[set[str]], vectors: WordVectors, scale: float) -> np.ndarray:
    """Each row's meaning features: per block, ``scale`` x the mean vector of its words in the table,
    shrunk as the scorer shrinks it (``MEANING_PRIOR`` more words of a zero vector)."""
    import numpy as np

    dims = vectors.dims
    out = np.zeros((len(rows), dims * len(MEANING_BLOCKS)))
    index = vectors.index
    for r, row in enumerate(rows):
        for b, block in enumerate(MEANING_BLOCKS):
            cut = len(block)
            ids = [i for f in row if f.startswith(block) and (i := index.get(f[cut:])) is not None]
            if ids:
                # Sorted: a set's order changes with the process's hash seed, and a sum in another
                # order differs in its last bits, enough to flip a rounded weight (the same data must
                # give the same model file, run after run).
                ids.sort()
                out[r, b * dims : (b + 1) * dims] = vectors.vectors[ids].sum(axis=0) / (
                    len(ids) + MEANING_PRIOR
                )
    return out * scale


def fit(
    examples: Sequence[Example],
    settings: FitSettings,
    *,
    threshold: float = 0.5,
    rows: Sequence[set[str]] | None = None,
    meaning: np.ndarray | None = None,
) -> ScorerModel:
    """A model fitted on ``examples`` (``rows``, ``meaning``: their features, when already computed)."""
    try:
        import numpy as np
        from scipy.sparse import csr_matrix, hstack
        from sklearn.linear_model import LogisticRegression
    except ImportError as exc:  # on the path without its dependencies (a checkout, not an install)
        raise RuntimeError(
            "training needs scikit-learn, a dependency of the training package: pip install -e ./training"
        ) from exc
    if rows is None:
        rows = [_features(e) for e in examples]
    vectors = load_word_vectors() if settings.meaning_scale else None
    if vectors is not None and meaning is None:
        meaning = meaning_matrix(rows, vectors, settings.meaning_scale)
    counts = Counter(f for row in rows for f in row)
    names = sorted(f for f, n in counts.items() if n >= settings.min_count)
    column = {f: i for i, f in enumerate(names)}
    labels = [1 if e.label == "hard" else 0 for e in examples]
    if len(set(labels)) < 2:
        raise ValueError("training needs examples of both labels, hard and easy")
    # liblinear takes 32-bit indices only; the rows are sets, so every value is 1.
    scale = np.asarray([_scale(name, settings.structure_scale) for name in names])
    indices: list[int] = []
    indptr = [0]
    values: list[float] = []
    table = [table_of(name) for name in names]
    for row in rows:
        known = sorted(column[f] for f in row if f in column)
        # Each row's word blocks damped as the scorer damps them, by the block's size in the row
        # (every feature of the block, known to the model or not: what the scorer counts).
        sizes = Counter(map(table_of, row))
        factor = {name: damping(sizes[name], settings.damping) if name in DAMPED else 1.0 for name in sizes}
        indices.extend(known)
        values.extend(scale[i] * factor[table[i]] for i in known)
        indptr.append(len(indices))
    index_array = np.asarray(indices, dtype=np.int32)
    matrix = csr_matrix(
        (np.asarray(values), index_array, np.asarray(indptr, dtype=np.int32)),
        shape=(len(rows), len(names)),
    )
    if vectors is not None and meaning is not None:
        matrix = hstack([matrix, csr_matrix(meaning)], format="csr")
    groups = [group_of(e) for e in examples] if settings.heads else []
    names_of_groups = sorted(set(groups))
    if len(names_of_groups) <= 2:  # one hard group and one easy one: a single head is the same model
        heads: tuple[Head, ...] = ONE_HEAD
        targets = [labels]
    else:
        heads = tuple(Head(g, g in _HARD_GROUPS) for g in names_of_groups)
        targets = [[1 if group == g else 0 for group in groups] for g in names_of_groups]
    coefs, intercepts = [], []
    factors = dict(settings.head_c)
    for head, target in zip(heads, targets, strict=True):
        model = LogisticRegression(
            C=settings.c * factors.get(head.name, 1.0),
            solver="liblinear",
            class_weight="balanced",
            max_iter=2000,
            random_state=settings.seed,
        )
        model.fit(matrix, target)
        coefs.append(model.coef_[0])
        intercepts.append(round(float(model.intercept_[0]), 4))
    stored = [coef[: len(names)] * scale for coef in coefs]
    kept = [i for i in range(len(names)) if max(abs(w[i]) for w in stored) >= settings.prune]
    weights = ([str(names[i]) for i in kept], [[round(float(w[i]), 4) for i in kept] for w in stored])
    tables: dict[str, tuple[list[str], list[list[float]]]] = {}
    if vectors is not None:
        # Linear in a mean of vectors = the mean of each word's projection: one number per word, block
        # and head.
        projections = []
        for coef in coefs:
            dense = coef[len(names) :].reshape(len(MEANING_BLOCKS), vectors.dims) * settings.meaning_scale
            projections.append((vectors.vectors @ dense.T).T)  # blocks x words
        for b, block in enumerate(MEANING_BLOCKS):
            tables[block] = (list(vectors.words), [[round(float(v), 3) for v in p[b]] for p in projections])
    meta: dict[str, Any] = {
        "created": datetime.now(UTC).date().isoformat(),
        "examples": len(examples),
        "by_source": dict(sorted(Counter(e.source for e in examples).items())),
        "c": settings.c,
        "structure_scale": settings.structure_scale,
        "meaning_scale": settings.meaning_scale,
        "meaning_dims": vectors.dims if vectors is not None else 0,
        "min_count": settings.min_count,
        "seed": settings.seed,
        "heads": [h.name for h in heads],
        "damping": settings.damping,
        "head_c": {h.name: factors[h.name] for h in heads if h.name in factors},
    }
    return ScorerModel.from_columns(weights, intercepts, threshold, meta, tables, heads, settings.damping)


def _scale(name: str, structure: float) -> float:
    # The context's features ("c:s:...", kind "c") keep the scale of a word, its structure included:
    # doubled like the newest turn's, a system prompt's shape alone would outweigh a chat turn under it,
    # and the context weighs less than the newest turn.
    return structure if name.split(":", 1)[0] in ("s", "ps") else 1.0


def predict(model: ScorerModel, examples: Sequence[Example]) -> list[Prediction]:
    """Scores as the gateway computes them: the newest turn and its context."""
    out = []
    for example in examples:
        talk = conversation({"messages": example.messages})
        out.append(Prediction(example, model.score(talk.newest, talk.context).score))
    return out


def leave_one_source_out(
    examples: Sequence[Example], settings: FitSettings, *, jobs: int | None = None, folds: int | None = None
) -> list[Prediction]:
    """Each source's examples scored by a model trained on every other source; with ``folds``, the
    sources dealt in turn (sorted by name) into that many groups, each group held out together: every
    source is still scored by a model that never saw it, from ``folds`` fits instead of one per source
    (`gateway router train`: a four-head model's 85 folds take ~20 minutes on 2 cores, 12 about 3).

    The folds run in ``jobs`` threads (default: one per core, at most 4): liblinear releases the GIL
    while it fits, which is most of a fold, so 2 cores halve the time. The result does not depend on
    ``jobs`` (each fold is seeded and independent).
    """
    sources = sorted({e.source for e in examples})
    groups = (
        [sources[i::folds] for i in range(folds)]
        if folds and folds < len(sources)
        else [[s] for s in sources]
    )
    rows = [_features(e) for e in examples]  # once, not once per fold
    meaning = (
        meaning_matrix(rows, load_word_vectors(), settings.meaning_scale) if settings.meaning_scale else None
    )

    def fold(held_sources: list[str]) -> list[Prediction]:
        held = set(held_sources)
        train = [i for i, e in enumerate(examples) if e.source not in held]
        if len({examples[i].label for i in train}) < 2:
            return []  # nothing to learn from without these sources
        model = fit(
            [examples[i] for i in train],
            settings,
            rows=[rows[i] for i in train],
            meaning=None if meaning is None else meaning[train],
        )
        return predict(model, [e for e in examples if e.source in held])

    workers = jobs or min(4, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [p for predictions in pool.map(fold, groups) for p in predictions]


# Thresholds whose balanced accuracy is within this of the best count as equally good (choose_threshold).
NEAR_BEST = 0.001


def choose_threshold(predictions: Sequence[Prediction]) -> float:
    """The threshold with the best balanced accuracy (the mean of the hard and the easy recall), and
    among those within NEAR_BEST of it, the one whose worst class (category) does best.

    Balanced, because the two errors cost differently but both matter: a hard request on the diffusion
    backend is a wrong answer, an easy one on the autoregressive backend is a slow one; an operator who
    weighs them differently sets routing.scorer.threshold (docs/scorer.md). Then the worst class,
    because balanced accuracy is flat near its best, where a few hundredths move errors between classes
    and the mean does not notice: there the threshold that fails its weakest class least is chosen.
    With labels alone (an operator's data) the classes are hard and easy: the fairer of the two recalls.
    """
    values = {step / 100: balanced_accuracy(predictions, step / 100) for step in range(5, 96)}
    best = max(values.values())
    near = [t for t, v in values.items() if v >= best - NEAR_BEST - 1e-12]
    by_class: dict[str, list[Prediction]] = {}
    for p in predictions:
        by_class.setdefault(p.example.category, []).append(p)

    def worst(threshold: float) -> float:
        return min(
            sum((p.score >= threshold) == (p.example.label == "hard") for p in rows) / len(rows)
            for rows in by_class.values()
        )

    # Ties go to the threshold nearest 0.5: the least surprising choice.
    return max(near, key=lambda t: (round(worst(t), 9), -abs(t - 0.5)))


def recall(predictions: Sequence[Prediction], threshold: float, label: str) -> float:
    rows = [p for p in predictions if p.example.label == label]
    if not rows:
        return float("nan")
    right = sum((p.score >= threshold) == (label == "hard") for p in rows)
    return right / len(rows)


def balanced_accuracy(predictions: Sequence[Prediction], threshold: float) -> float:
    return (recall(predictions, threshold, "hard") + recall(predictions, threshold, "easy")) / 2
