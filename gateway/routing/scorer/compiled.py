"""The scorer's compiled kernel (``_kernel.c``) as the rest of the scorer sees it: loading it, what it reads
of text.py's recipe, and the ASCII text it reads in place of a text beyond ASCII.

The kernel is an optional C extension (``ext-modules`` in pyproject.toml): where the install had no C
compiler, ``KERNEL`` is None and vector.py scores with the pure-Python reference, which gives the same
scores.
"""

from __future__ import annotations

import importlib
from array import array
from collections.abc import Iterable
from typing import Protocol, TypeAlias, cast

from gateway.routing.scorer import lexicons
from gateway.routing.scorer.text import HEAD_CHARS, KERNEL_MARKS, KERNEL_SCALES, TAIL_CHARS

__all__ = ["KERNEL", "Kernel", "Weights", "ascii_twin", "kernel_tables"]

# A model's bucket weights: floats, or the integers of a model file (gateway.routing.scorer.model); the
# kernel reads only the latter.
Weights: TypeAlias = "array[float] | array[int]"
# The sums of a text's w:, b: and p: blocks (squared length, dot product), and its shape features' names.
_TextSums: TypeAlias = "tuple[tuple[int, int], tuple[int, int], tuple[int, int], list[str]]"


class Kernel(Protocol):
    """The kernel's functions as the scorer calls them: a block's squared length and dot product, and the
    tables and sums of a text's features."""

    def words(
        self, tokens: list[str], prefix: str, chars: tuple[int, ...], pairs: bool, weights: Weights, /
    ) -> tuple[int, int]: ...

    def names(self, names: Iterable[str], prefix: str, weights: Weights, /) -> tuple[int, int]: ...

    def tables(
        self,
        words: dict[str, int],
        scales: tuple[tuple[tuple[str, ...], ...], ...],
        marks: tuple[tuple[str, ...], ...],
        emoticons: tuple[str, ...],
        head: int,
        tail: int,
        /,
    ) -> object: ...

    def text_sums(self, text: str, tables: object, weights: Weights, /) -> _TextSums | None: ...


def _load() -> Kernel | None:
    try:
        # By name, typed by the protocol: an extension module has no source for a type checker.
        return cast(Kernel, importlib.import_module("gateway.routing.scorer._kernel"))
    except ImportError:  # not built (no C compiler at install time): the pure-Python reference
        return None


KERNEL = _load()

# Each lexicon as one bit of a word's flags, in the order of the kernel's ``L_`` constants.
_KERNEL_LEXICONS = (
    lexicons.CODE_TERMS,
    lexicons.CODE_VERBS,
    lexicons.MATH_TERMS,
    lexicons.TRANSFORM_TERMS,
    lexicons.DOMAIN,
    lexicons.SOCIAL_TERMS,
    lexicons.LAUGHTER,
    lexicons.QUANTITY_WORDS,
    lexicons.UNITS,
    lexicons.NOT_NAMES,
    lexicons.SECOND_PERSON,
    lexicons.MERIDIEM,
    lexicons.QUANTITY_AFTER.keys(),
)


def _pasted(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("ps:" + name[2:] for name in names)


def kernel_tables() -> tuple[
    dict[str, int],
    tuple[tuple[tuple[str, ...], ...], ...],
    tuple[tuple[str, ...], ...],
    tuple[str, ...],
    int,
    int,
]:
    """The arguments of the kernel's ``tables``: the lexicons as ``{word: flags}`` (a quantity question's
    cue and next word as one entry, ``"how many"``), the shape names for the turn (``s:``) and for a
    pasted text (``ps:``), the emoticons, and the window read of a long text."""
    flags: dict[str, int] = {}
    for bit, words in enumerate(_KERNEL_LEXICONS):
        for word in words:
            flags[word] = flags.get(word, 0) | 1 << bit
    after = 1 << len(_KERNEL_LEXICONS)
    for cue, nexts in lexicons.QUANTITY_AFTER.items():
        for word in nexts:
            flags[cue + " " + word] = flags.get(cue + " " + word, 0) | after
    scales = (KERNEL_SCALES, tuple(map(_pasted, KERNEL_SCALES)))
    return flags, scales, (KERNEL_MARKS, _pasted(KERNEL_MARKS)), lexicons.EMOTICONS, HEAD_CHARS, TAIL_CHARS


# Western typography beyond ASCII that no feature reads: curly quotes, dashes and the ellipsis are not word
# characters and start no pattern here, and neither does '"'. The euro sign is not among them: it is money.
_NEUTRAL_MARKS = ("\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014", "\u2026")


def ascii_twin(text: str) -> str | None:
    """An ASCII text with the features of ``text`` (the text itself when it is ASCII), or None: the window
    ``featurize_blocks`` reads, each neutral mark replaced by '"'. English typed on a phone has curly
    quotes; its twin lets the compiled kernel, which reads ASCII only, find its features."""
    if text.isascii():
        return text
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        # A window is its own window: featurize_blocks reads the same characters of it.
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    for mark in _NEUTRAL_MARKS:
        if mark in text:
            text = text.replace(mark, '"')
    return text if text.isascii() else None
