"""The threshold judged traffic suggests: the one that minimises regrets plus ``cost_ratio`` times missed
savings over labelled requests and their scores.

At threshold ``t`` a request scored below ``t`` goes to diffusion: a ``hard`` one there is a regret; one
scored at or above ``t`` goes to the autoregressive backend: an ``easy`` one there is a missed saving. A
``cost_ratio`` of 0.2 says five missed savings cost as much as one regret (a slower answer against a worse
one). Thresholds are tried on a grid of hundredths; of the cheapest, the middle of the first run is taken,
as far as the data allow from either side's nearest mistake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Point", "Suggestion", "suggest"]

_GRID = [i / 100 for i in range(101)]


@dataclass(frozen=True, slots=True)
class Point:
    threshold: float
    regrets: int
    missed: int
    cost: float


@dataclass(frozen=True, slots=True)
class Suggestion:
    best: Point
    hard: int
    easy: int
    sweep: list[Point]  # every tenth, for a table

    def at(self, threshold: float) -> Point:
        return next(p for p in self.sweep if abs(p.threshold - threshold) < 1e-9)


def _point(scored: Sequence[tuple[float, str]], t: float, cost_ratio: float) -> Point:
    regrets = sum(1 for score, label in scored if label == "hard" and score < t)
    missed = sum(1 for score, label in scored if label == "easy" and score >= t)
    return Point(t, regrets, missed, regrets + cost_ratio * missed)


def suggest(scored: Sequence[tuple[float, str]], cost_ratio: float) -> Suggestion:
    """``scored``: (score, label) per labelled request. Raises ValueError when there is none."""
    if not scored:
        raise ValueError("no labelled requests to choose a threshold on")
    points = [_point(scored, t, cost_ratio) for t in _GRID]
    cheapest = min(p.cost for p in points)
    first = next(i for i, p in enumerate(points) if p.cost == cheapest)
    last = first
    while last + 1 < len(points) and points[last + 1].cost == cheapest:
        last += 1
    best = points[(first + last) // 2]
    hard = sum(1 for _, label in scored if label == "hard")
    return Suggestion(best, hard, len(scored) - hard, [points[i] for i in range(0, 101, 10)])
