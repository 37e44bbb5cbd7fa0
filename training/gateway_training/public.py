"""Public prompt collections shipped with the package (``data/*.jsonl.gz``), for training the scorer.

The files are built by ``bench/build_router_data.py`` from packages installable from PyPI and committed,
so training runs offline. Each line is ``{"messages": [...], "label": ..., "source": ..., "category": ...}``
(plus ``"task"`` where the collection has named tasks). Every source must be listed in LICENCES: a file
with an unlisted source is an error, so a collection cannot be added without its licence.
"""

from __future__ import annotations

import gzip
import json
from importlib import resources
from typing import Any

from gateway.errors import DataError
from gateway_training.sources import Example, Label

__all__ = ["CATEGORIES", "LICENCES", "load_examples"]

LICENCES: dict[str, str] = {
    "pypi:reasoning-gym": (
        "Apache-2.0 (reasoning-gym 0.1.25, open-thought; zebra_puzzles builds on MIT code from "
        "'Faith and Fate', Dziri et al.)"
    ),
    "pypi:chitchat-dataset": "MIT (chitchat-dataset 0.9.0, BYU Perception, Control and Cognition Lab)",
}

LABELS: frozenset[str] = frozenset({"hard", "easy"})
CATEGORIES: frozenset[str] = frozenset({"reasoning", "math-word", "math", "smalltalk"})


def _example(row: Any, where: str) -> Example:
    if not isinstance(row, dict):
        raise DataError(f"{where}: not a JSON object")
    messages, label, source, category = (row.get(k) for k in ("messages", "label", "source", "category"))
    if source not in LICENCES:
        raise DataError(f"{where}: source {source!r} has no licence in LICENCES")
    if label not in LABELS or category not in CATEGORIES:
        raise DataError(f"{where}: label {label!r} / category {category!r} not allowed")
    if not isinstance(messages, list) or not messages:
        raise DataError(f"{where}: messages must be a non-empty list")
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "user":
        raise DataError(f"{where}: the last message is not a user turn")
    if not isinstance(last.get("content"), str) or not last["content"].strip():
        raise DataError(f"{where}: the last user turn has no text")
    lbl: Label = "hard" if label == "hard" else "easy"
    return Example(messages=messages, label=lbl, source=source, category=category)


def load_examples() -> list[Example]:
    """Every example of every ``data/*.jsonl.gz``, files in name order, lines in file order."""
    folder = resources.files("gateway_training").joinpath("data")
    out: list[Example] = []
    names = sorted(e.name for e in folder.iterdir() if e.name.endswith(".jsonl.gz"))
    for name in names:
        text = gzip.decompress(folder.joinpath(name).read_bytes()).decode("utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                out.append(_example(json.loads(line), f"{name}:{number}"))
    return out
