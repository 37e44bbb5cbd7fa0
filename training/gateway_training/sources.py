"""Where training examples come from: a named source, its label, its licence, and a generator.

A generator source draws conversations from templates written for this project; corpora of written and
real requests (``corpus.py``) are the rest of the training data, and the measure.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Example", "Label", "Source"]

Label = Literal["hard", "easy"]
# An OpenAI chat request's "messages" (system, user, assistant turns), as a client would send it.
Messages = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Example:
    messages: Messages
    label: Label
    source: str  # Source.name, or a corpus's source
    category: str  # Source.category, or a corpus row's class
    # What the evaluation holds out together (a written group, a real collection, a generator family);
    # empty: the source.
    group: str = ""
    lang: str = ""  # ISO 639-1, where known

    @property
    def unit(self) -> str:
        return self.group or self.source

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "label": self.label,
            "source": self.source,
            "category": self.category,
        }


@dataclass(frozen=True, slots=True)
class Source:
    name: str  # "gen:swaps", "pypi:<package>"
    label: Label
    # The evaluation class it belongs to, e.g. "reasoning", "math-word", "smalltalk", "factual",
    # "transform" (summarise / rewrite / translate), "writing", "advice".
    category: str
    licence: str  # "Apache-2.0 (this project)" for our own generators; the package's licence otherwise
    # Draws one conversation (messages) from the generator; deterministic for a given rng state.
    draw: Callable[[random.Random], Messages]

    def examples(self, n: int, seed: int) -> list[Example]:
        rng = random.Random(f"{self.name}:{seed}")
        return [Example(self.draw(rng), self.label, self.name, self.category) for _ in range(n)]
