"""Training data from judged samples: the scorer's JSONL format, ``{"messages": [...], "label": ...}``.

The label says whether diffusion was good enough for the request, which is what the difficulty scorer
predicts: a diffusion answer judged worse is ``hard`` (a regret, when the router had sent the request to
diffusion), one judged as good or better is ``easy`` (a missed saving, when the router had sent it to the
autoregressive backend). A request sampled more than once keeps the label most of its verdicts give; one
whose verdicts are split evenly is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["Labelled", "label_of", "labelled", "read_labels"]


def label_of(verdict: str) -> str:
    """``hard`` when the diffusion answer was judged worse, else ``easy``."""
    return "hard" if verdict == "diffusion_worse" else "easy"


@dataclass(frozen=True, slots=True)
class Labelled:
    rows: list[dict[str, Any]]  # the training lines
    split: int  # requests left out: as many verdicts one way as the other


def labelled(samples: Iterable[dict[str, Any]]) -> Labelled:
    """Training lines from stored samples that have a verdict and their request's text, in first-seen
    order."""
    votes: dict[str, list[int]] = {}
    for sample in samples:
        request, verdict = sample.get("request"), sample.get("verdict")
        if not isinstance(request, str) or not isinstance(verdict, str):
            continue
        hard, easy = votes.setdefault(request, [0, 0])
        votes[request] = [hard + 1, easy] if label_of(verdict) == "hard" else [hard, easy + 1]
    rows, split = [], 0
    for request, (hard, easy) in votes.items():
        if hard == easy:
            split += 1
            continue
        rows.append({**orjson.loads(request), "label": "hard" if hard > easy else "easy"})
    return Labelled(rows, split)


def read_labels(lines: Iterable[str]) -> list[tuple[dict[str, Any], str]]:
    """(request, label) from training lines; raises ValueError naming the line for one it cannot read."""
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise ValueError(f"line {number}: not JSON") from None
        label = row.get("label") if isinstance(row, dict) else None
        if label not in ("hard", "easy"):
            raise ValueError(f'line {number}: label must be "hard" or "easy"')
        request = {k: row[k] for k in ("messages", "prompt") if k in row}
        if not request:
            raise ValueError(f"line {number}: no messages or prompt")
        out.append((request, label))
    return out
