# The compiled kernel's interface (_kernel.c); vector.py imports it only where it was built.
from collections.abc import Iterable
from typing import Any

def words(
    tokens: list[str], prefix: str, chars: tuple[int, ...], pairs: bool, weights: Any, /
) -> tuple[int, int]: ...
def names(names: Iterable[str], prefix: str, weights: Any, /) -> tuple[int, int]: ...
def bucket(name: str, /) -> int: ...
def tables(
    words: dict[str, int],
    scales: tuple[tuple[tuple[str, ...], ...], ...],
    marks: tuple[tuple[str, ...], ...],
    emoticons: tuple[str, ...],
    head: int,
    tail: int,
    /,
) -> object: ...
def text_sums(
    text: str, tables: object, weights: Any, /
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], list[str]] | None: ...
def text_features(text: str, tables: object, /) -> tuple[set[str], set[str], set[str], set[str]] | None: ...
