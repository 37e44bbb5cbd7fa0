"""Rows as both stores accept them, whatever clients sent and backends reported.

A row holds what clients sent (a model string, a JWT subject, a prompt) and what backends reported (token
counts, answers), and one value a store refuses makes it refuse the whole batch, other tenants' rows
included. A :class:`RowCleaner` knows a table's columns and makes a row fit them: text within its column's
length with no NUL or lone surrogate, integers within PostgreSQL's INTEGER, finite floats, NULL only where
the column allows it. A clean row (nearly every one) is only looked at, one type and range check a value.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import Boolean, Float, Integer, String, Table

__all__ = ["RowCleaner"]

Row = TypeVar("Row", bound=tuple[Any, ...])

# PostgreSQL's INTEGER: the widest integer both stores take (SQLite's driver refuses past 64 bits, and
# not as a database error, so that such a row was retried for ever).
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_INF = math.inf
_REPLACEMENT = "\ufffd"


def _text(value: Any, limit: int, nullable: bool) -> str | None:
    if value is None:
        return None if nullable else ""
    text = (value if type(value) is str else str(value))[:limit]
    if text.isascii():
        return text.replace("\x00", _REPLACEMENT)
    # A lone surrogate cannot be encoded as UTF-8: both drivers raise before the database sees the row.
    return "".join(_REPLACEMENT if c == "\x00" or "\ud800" <= c <= "\udfff" else c for c in text)


def _integer(value: Any, nullable: bool) -> int | None:
    if value is None and nullable:
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return None if nullable else 0
    return min(max(number, _INT_MIN), _INT_MAX)


def _real(value: Any, nullable: bool) -> float | None:
    if value is None and nullable:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None if nullable else 0.0
    # NaN and infinities: SQLite stores NaN as NULL (a NOT NULL column then refuses the row), and in
    # PostgreSQL one would turn every sum over its column into NaN.
    if math.isfinite(number):
        return number
    return None if nullable else 0.0


class RowCleaner:
    """Cleans rows given as tuples of ``fields`` (a NamedTuple's), for ``table``'s columns of those names."""

    def __init__(self, table: Table, fields: Sequence[str]) -> None:
        def columns(kind: type) -> tuple[tuple[int, int, bool], ...]:
            """(position in the row, length, nullable) of every column of this SQL type; a column without
            a length (TEXT) is cut by whoever fills it, not here."""
            found = []
            for i, name in enumerate(fields):
                column = table.c[name]
                if isinstance(column.type, kind):
                    length = getattr(column.type, "length", None) or sys.maxsize
                    found.append((i, length, bool(column.nullable)))
            return tuple(found)

        self._text = columns(String)
        self._integers = columns(Integer)
        self._reals = columns(Float)
        self._booleans = tuple(i for i, _, _ in columns(Boolean))
        covered = len(self._text) + len(self._integers) + len(self._reals) + len(self._booleans)
        assert covered == len(fields), f"{table.name}: a column of a type the cleaner does not know"

    def clean(self, row: Row, make: Callable[[list[Any]], Row]) -> Row:
        """``row`` as both stores accept it (itself when it already is); ``make`` builds a row from values."""
        values: list[Any] | None = None
        for i, limit, nullable in self._text:
            value = row[i]
            if type(value) is str and len(value) <= limit and value.isascii() and "\x00" not in value:
                continue
            if value is None and nullable:
                continue
            values = values or list(row)
            values[i] = _text(value, limit, nullable)
        for i, _, nullable in self._integers:
            value = row[i]
            if type(value) is int and _INT_MIN <= value <= _INT_MAX:
                continue
            values = values or list(row)
            values[i] = _integer(value, nullable)
        for i, _, nullable in self._reals:
            value = row[i]
            if type(value) is float and -_INF < value < _INF:  # False for NaN too
                continue
            if value is None and nullable:
                continue
            values = values or list(row)
            values[i] = _real(value, nullable)
        for i in self._booleans:
            if type(row[i]) is not bool:
                values = values or list(row)
                values[i] = bool(row[i])
        return row if values is None else make(values)
