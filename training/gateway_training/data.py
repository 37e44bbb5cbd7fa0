"""Training examples: the built-in corpora and generators, and labelled JSONL files of an operator's own
traffic.

A JSONL line is ``{"messages": [...], "label": "hard" | "easy"}`` (or ``"prompt": "..."`` instead of
messages); ``source`` and ``category`` are optional and default to the file's name and the label.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gateway.errors import DataError
from gateway_training import generators
from gateway_training.corpus import real_examples, reasoning_gym_examples, written_examples
from gateway_training.sources import Example, Source

__all__ = [
    "DataError",
    "builtin_examples",
    "builtin_sources",
    "dedupe",
    "generated_examples",
    "load_jsonl",
]


def builtin_sources() -> list[Source]:
    """Every generator source: each module under ``generators`` that defines ``SOURCES``."""
    found: list[Source] = []
    for info in sorted(pkgutil.iter_modules(generators.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{generators.__name__}.{info.name}")
        found.extend(getattr(module, "SOURCES", ()))
    names = [s.name for s in found]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise DataError(f"generator sources share a name: {', '.join(duplicated)}")
    return found


# Generator categories, in the corpora's class names.
_CLASS = {"factual": "short_facts", "writing": "creative", "math-word": "math_word"}


def generated_examples(per_source: int, seed: int) -> list[Example]:
    """``per_source`` examples from each generator, and as many from each reasoning-gym task: template
    families, so a minority of the training data; each is its own group."""
    out: list[Example] = []
    for source in builtin_sources():
        category = _CLASS.get(source.category, source.category)
        out += [
            Example(e.messages, e.label, e.source, category, group="gen:" + e.source, lang="en")
            for e in dedupe(source.examples(per_source, seed))
        ]
    by_task: dict[str, list[Example]] = {}
    for e in reasoning_gym_examples():
        by_task.setdefault(e.source, []).append(e)
    for name in sorted(by_task):
        rows = by_task[name]
        out += random.Random(f"{name}:{seed}").sample(rows, min(per_source, len(rows)))
    return out


def builtin_examples(per_source: int, seed: int, extra: Path | None = None) -> list[Example]:
    """The built-in training and evaluation data: the written and real corpora (``corpus.py``; real
    collections in ``extra`` too, for evaluation), and ``per_source`` examples of each generator."""
    return [*written_examples(), *real_examples(extra), *generated_examples(per_source, seed)]


def dedupe(examples: Iterable[Example]) -> list[Example]:
    seen: set[str] = set()
    out: list[Example] = []
    for example in examples:
        key = json.dumps(example.messages, sort_keys=True, ensure_ascii=False)
        if key not in seen:
            seen.add(key)
            out.append(example)
    return out


def load_jsonl(path: Path) -> list[Example]:
    """Labelled examples from a JSONL file; a bad line is a DataError naming the file and the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror or exc}") from exc
    out: list[Example] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise DataError(f"{path}:{number}: not JSON ({exc})") from exc
        out.append(_example(row, path, number))
    if not out:
        raise DataError(f"{path} holds no examples")
    return out


def _example(row: Any, path: Path, number: int) -> Example:
    where = f"{path}:{number}"
    if not isinstance(row, dict):
        raise DataError(f"{where}: expected an object with messages (or prompt) and label")
    label = row.get("label")
    if label not in ("hard", "easy"):
        raise DataError(f'{where}: label must be "hard" or "easy", not {label!r}')
    messages = row.get("messages")
    if messages is None and isinstance(row.get("prompt"), str):
        messages = [{"role": "user", "content": row["prompt"]}]
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise DataError(f"{where}: messages must be a non-empty list of message objects")
    source, category = row.get("source"), row.get("category")
    source = source if isinstance(source, str) else f"file:{path.stem}"
    category = category if isinstance(category, str) else str(label)
    return Example(messages, label, source, category)
