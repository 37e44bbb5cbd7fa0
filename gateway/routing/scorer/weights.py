"""A scorer model's weight tables: a dict from each feature to its heads' weights, packed in
one integer, so that a request's weights are summed for every head at once.

Each head's weight of a feature takes LANE bits of the integer: the weight in millionths plus OFFSET, so
that no lane is negative. The sum of packed values is then the packed sums of every head, exactly
(integers: the same score whatever order a set iterates in, which changes with each process's hash
seed), with one ``sum`` over the features a request hits instead of one per head, which keeps a long
turn within its 400 µs budget (bench/routing_bench.py). A lane holds the sum of 2**23 values before it could
carry into the next, and a table has tens of thousands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["Columns", "columns_json", "columns_of", "per_head", "sum_of", "table", "table_sum", "unpack"]

# A table's keys (features, or a block's words) and one column of weights per head.
Columns = tuple[Sequence[str], Sequence[Sequence[float]]]

_LANE = 64
_OFFSET = 1 << 40
_SCALE = 10**6  # stored weights have at most 4 decimals (meaning weights 3): kept exactly
_LIMIT = 10**6  # |weight| below this fits a lane with room for the sums


def _pack(weights: Sequence[float], name: str) -> int:
    packed = 0
    for k, weight in enumerate(weights):
        if not math.isfinite(weight):
            raise ValueError(f"{name!r} holds a weight that is not a finite number")
        if abs(weight) >= _LIMIT:
            raise ValueError(f"{name!r} holds a weight out of range: {weight}")
        packed |= (round(weight * _SCALE) + _OFFSET) << (_LANE * k)
    return packed


def unpack(packed: int, heads: int, count: int = 1) -> tuple[float, ...]:
    """The heads' weights of a packed value, or of a sum of ``count`` packed values."""
    mask = (1 << _LANE) - 1
    return tuple((((packed >> (_LANE * k)) & mask) - count * _OFFSET) / _SCALE for k in range(heads))


def table_sum(table: dict[str, int], features: set[str], heads: int) -> list[float]:
    """Each head's sum of the weights of the table's features among ``features``."""
    return sum_of(table, table.keys() & features, heads)


def sum_of(table: dict[str, int], hits: set[str], heads: int) -> list[float]:
    """Each head's sum of the weights of ``hits``, features the table holds."""
    return list(unpack(sum(map(table.__getitem__, hits)), heads, len(hits)))


def per_head(value: float | Sequence[float], heads: int, name: str) -> tuple[float, ...]:
    values = (float(value),) if isinstance(value, int | float) else tuple(float(v) for v in value)
    if len(values) != heads:
        raise ValueError(f"{name!r} has {len(values)} weights for {heads} heads")
    return values


def table(keys: Sequence[str], columns: Sequence[Sequence[float]], heads: int, name: str) -> dict[str, int]:
    """``keys`` and their packed weights; ValueError when the columns do not fit them."""
    if len(columns) != heads or any(len(c) != len(keys) for c in columns):
        raise ValueError(f"{name!r} needs {heads} column(s) of {len(keys)} weights")
    table = {
        k: _pack([float(w) for w in row], name)
        for k, row in zip(keys, zip(*columns, strict=True), strict=True)
    }
    if len(table) != len(keys):
        raise ValueError(f"{name!r} names a feature twice")
    return table


def columns_json(items: Sequence[tuple[str, int]], heads: int) -> dict[str, Any]:
    if any("\n" in k for k, _ in items):
        raise ValueError("a feature name holds a line break")
    rows = [unpack(v, heads) for _, v in items]
    return {
        "keys": "\n".join(k for k, _ in items),
        "heads": [" ".join(repr(r[k]) for r in rows) for k in range(heads)],
    }


def columns_of(table: dict[str, Any]) -> Columns:
    """A format-2 table: ``{"keys": "one\\ntwo...", "heads": ["0.5 -1.25 ...", ...]}``, its keys a
    string of lines and each head's weights a string of numbers, so that reading it makes a few large
    strings rather than a Python object per weight (whose memory the process would keep)."""
    keys, columns = table["keys"], table["heads"]
    if (
        not isinstance(keys, str)
        or not isinstance(columns, list)
        or not all(isinstance(c, str) for c in columns)
    ):
        raise ValueError("a table needs keys (a string of lines) and heads (a string of numbers per head)")
    return keys.split("\n") if keys else [], [[float(v) for v in c.split()] for c in columns]
