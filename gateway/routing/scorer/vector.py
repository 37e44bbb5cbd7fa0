"""A request as the difficulty scorer reads it: a sparse vector, the same at training and at run time.

Three parts, each from the newest user turn unless said otherwise:

- **n-grams**, hashed into ``2**BITS`` buckets (CRC-32 of the feature's name, so the same in every
  process and on every platform): the lowercased words, word pairs and the character 2- to 4-grams of
  each word (padded with a space at both ends). Character n-grams read every script alike: Chinese
  and Japanese, which have no spaces, Russian and German inflections, typos. The turn's first and last
  ``CLIP`` characters are read: an instruction sits at one end of a long paste.
- **text features** of ``text.py``, hashed likewise: the words with numbers folded together, word pairs
  and the words of a pasted text apart from its instruction; and, by name (``shape``), the shape of the
  text: lengths, numbers, units, maths notation, code punctuation, lexicon counts.
- **context**, with weights of its own: the words of the system prompt and the words and character
  3-grams of the two user turns before the newest. Training puts every example behind bot personas,
  rules-style system prompts and unrelated small talk, so a persona weighs little and a hard exchange
  before a follow-up ("and for 5 boxes?") weighs what it should.

Each hashed block is scaled to about unit length (a long paste weighs what a short question does), then
by its block weight; the length counts a few features more than the block has (``_PRIOR``), so a
one-word turn is not decided by its one word. A shape feature counts ``SHAPE_VALUE``.

``FEATURE_SET`` names this recipe: a model file records the one it was trained on and the gateway refuses
a model of another (``tests/test_router_scorer.py`` fails when the recipe changes and the name does not).

Where the install built the compiled kernel (``_kernel.c``, loaded by ``compiled.py``), ``dot`` hashes and
sums through it; this module and text.py are its reference, equal to it bit for bit, and the only
implementation of ``vectorize`` (an explanation names what it hashed).
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
import unicodedata
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import TypeAlias

from gateway.routing.scorer.compiled import KERNEL, Kernel, Weights, ascii_twin, kernel_tables
from gateway.routing.scorer.text import featurize_blocks

__all__ = ["BITS", "FEATURE_SET", "SHAPE_VALUE", "RequestVector", "ScoreCache", "dot", "vectorize"]

FEATURE_SET = "ngram-shape/1"
BITS = 20
_MASK = (1 << BITS) - 1
CLIP = 1500  # characters read at each end of a long text
SYSTEM_PROMPTS = 128  # system prompts whose share of the score a model keeps (ScoreCache)
# Words whose buckets and weight sum a model keeps (ScoreCache), by prefix: the newest turn's, and the
# earlier turns' (read as character 3-grams only, and once for several newest turns).
WORDS = {"t:": 12_288, "prev:": 4_096}
SHAPE_VALUE = 0.25
# Block weights: the newest turn's n-grams and text words count in full, the context at half.
_TURN, _TEXT, _SYSTEM, _EARLIER = 1.0, 1.0, 0.5, 0.5
# What the squared length of a block is counted above its own: a sentence has dozens of features and
# hardly notices, one word ("ok", "x") has a handful and weighs about half as much as it would alone.
_PRIOR = 8.0
_WORD = re.compile(r"\w+")
_CHARS = (2, 3, 4)


# The labels explanations group contributions under, for what is not a word of the turn.
SYSTEM_LABEL = "system prompt"
EARLIER_LABEL = "earlier turns"


@dataclass(slots=True)
class RequestVector:
    """Hashed buckets and their values, by part (the turn's n-grams, its text features, the context),
    and shape features by name. ``labels`` maps a bucket to what it stands for, filled only when an
    explanation is asked for."""

    ngrams: dict[int, float] = field(default_factory=dict)
    text: dict[int, float] = field(default_factory=dict)
    context: dict[int, float] = field(default_factory=dict)
    shape: frozenset[str] = frozenset()
    labels: dict[int, str] | None = None

    def parts(self) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
        return self.ngrams, self.text, self.context


def _bucket(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "surrogatepass")) & _MASK


# Words up to this length are cached (``_token``); a longer run of letters (a clause of Chinese, a
# hash, a URL) is rare enough to hash each time, and would make one cache entry as large as its text.
_CACHED_CHARS = 32


def _buckets(prefix: str, token: str, chars: tuple[int, ...]) -> array[int]:
    padded = " " + token + " "
    out = array("i", [_bucket(prefix + "w:" + token)])
    for n in chars:
        out.extend(_bucket(prefix + "c:" + padded[i : i + n]) for i in range(len(padded) - n + 1))
    return out


_cached = functools.lru_cache(maxsize=1 << 14)(_buckets)


def _token(prefix: str, token: str, chars: tuple[int, ...]) -> array[int]:
    """The buckets of a word and of its character n-grams. Words recur from one request to the next (a
    few thousand make most text), so a short one is hashed once per process, not once per request: the
    cache is most of what keeps a long turn within a few milliseconds. It holds at most 16,384 words of
    at most 32 characters, as arrays of 4-byte integers: under 10 MB however it fills."""
    return _cached(prefix, token, chars) if len(token) <= _CACHED_CHARS else _buckets(prefix, token, chars)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _clip(text: str) -> str:
    return text if len(text) <= 2 * CLIP else text[:CLIP] + "\n" + text[-CLIP:]


class _Block:
    """One block's counts by bucket, then added to a vector at about unit length times its weight."""

    __slots__ = ("counts", "labels")

    def __init__(self, explain: bool) -> None:
        self.counts: Counter[int] = Counter()
        self.labels: dict[int, str] | None = {} if explain else None

    def add(self, name: str, label: str) -> None:
        bucket = _bucket(name)
        self.counts[bucket] += 1
        if self.labels is not None:
            self.labels.setdefault(bucket, label)

    def into(self, out: dict[int, float], weight: float, labels: dict[int, str] | None) -> None:
        if not self.counts:
            return
        norm = (sum(v * v for v in self.counts.values()) + _PRIOR) ** 0.5
        scale = weight / norm
        for bucket, count in self.counts.items():
            out[bucket] = out.get(bucket, 0.0) + count * scale
        if labels is not None and self.labels is not None:
            for bucket, label in self.labels.items():
                labels.setdefault(bucket, label)


def _ngrams(block: _Block, text: str, prefix: str, chars: tuple[int, ...], pairs: bool) -> None:
    tokens = _WORD.findall(text)
    counts, labels = block.counts, block.labels
    for token in tokens:
        buckets = _token(prefix, token, chars)
        counts.update(buckets)
        if labels is not None:
            for bucket in buckets:
                labels.setdefault(bucket, f'"{token}"')
    if pairs:
        for a, b in itertools.pairwise(tokens):
            block.add(prefix + "b:" + a + " " + b, f'"{a} {b}"')


def _label(feature: str) -> str:
    """A text feature's label: ``w:prove`` is the word "prove", ``p:`` a word of the pasted text."""
    kind, _, rest = feature.partition(":")
    if kind == "p":
        return f'pasted "{rest}"'
    return f'"{rest}"'


def vectorize(newest: str, system: str = "", earlier: str = "", *, explain: bool = False) -> RequestVector:
    """The scorer's features of a request: its newest user turn, system prompt and earlier user turns."""
    labels: dict[int, str] | None = {} if explain else None
    out = RequestVector(labels=labels)
    turn = _Block(explain)
    _ngrams(turn, _normal(_clip(newest)), "t:", _CHARS, pairs=True)
    turn.into(out.ngrams, _TURN, labels)
    text = featurize_blocks(newest)
    for part in (text.words, text.pairs, text.pasted):
        block = _Block(explain)
        for feature in part:
            block.add("x:" + feature, _label(feature))
        block.into(out.text, _TEXT, labels)
    out.shape = frozenset(text.shape)
    if system:
        block = _Block(explain)
        for token in _WORD.findall(_normal(_clip(system))):
            block.add("sys:w:" + token, SYSTEM_LABEL)
        block.into(out.context, _SYSTEM, labels)
    if earlier:
        block = _Block(explain)
        _ngrams(block, _normal(_clip(earlier)), "prev:", (3,), pairs=False)
        if block.labels is not None:
            block.labels = dict.fromkeys(block.labels, EARLIER_LABEL)
        block.into(out.context, _EARLIER, labels)
    return out


def _weighted(counts: Counter[int], weight: float, w: Weights) -> float:
    """A block's share of the logit: its counts at about unit length times ``weight``, dotted with ``w``
    (what ``_Block.into`` then a dot over the vector give, without building the vector)."""
    if not counts:
        return 0.0
    values = list(counts.values())
    norm: float = (sum(map(operator.mul, values, values)) + _PRIOR) ** 0.5
    total: float = sum(map(operator.mul, values, map(w.__getitem__, counts)))
    return weight / norm * total


# A word's buckets and their weights' sum.
_Summed: TypeAlias = "tuple[array[int], int | float]"


class ScoreCache:
    """What a model's score keeps from one request to the next.

    - Each word's weights summed over its buckets (the word's and its character n-grams', as ``_token``
      gives them), kept with the buckets: a word recurs from one request to the next, and summing its
      ~20 weights afresh costs a look-up each in a 2 MB table that the rest of a request's work keeps
      out of the CPU's caches. One cache per prefix, keyed by the word alone, of at most
      ``_CACHED_CHARS`` letters: ``WORDS`` of the newest turn's and of the earlier turns', as many
      together as ``_token`` keeps.
    - The system prompt's share, by the prompt as read (at most ``2 * CLIP + 1`` characters): a bot
      sends its persona with every request, and a persona of 1,500 characters costs three times a chat
      turn's own score. ``SYSTEM_PROMPTS`` of them, a few MB at most.
    """

    __slots__ = ("_by_prefix", "_w", "kernel", "system", "tables")

    def __init__(self, w: Weights, *, compiled: bool = True) -> None:
        self._w = w
        # The compiled kernel (``_kernel.c``) where it was built and reads these weights (a model file's
        # 16-bit integers); it needs none of the word caches below.
        self.kernel = KERNEL if compiled and w.typecode == "h" else None
        # text.py's recipe as the kernel reads it (its lexicons and feature names), built once.
        self.tables = None if self.kernel is None else self.kernel.tables(*kernel_tables())
        self._by_prefix: dict[tuple[str, tuple[int, ...]], Callable[[str], _Summed]] = {}
        self.system: Callable[[str], float] = functools.lru_cache(maxsize=SYSTEM_PROMPTS)(self._system)

    def _system(self, clipped: str) -> float:
        words = _WORD.findall(_normal(clipped))
        if self.kernel is not None:
            try:
                return _share(self.kernel.names(words, "sys:w:", self._w), _SYSTEM)
            except UnicodeEncodeError:
                pass  # a lone surrogate, which UTF-8 cannot encode: the reference reads it (surrogatepass)
        return _weighted(Counter(map(_named_bucket, map("sys:w:".__add__, words))), _SYSTEM, self._w)

    def _sum(self, prefix: str, chars: tuple[int, ...], token: str) -> _Summed:
        # Hashed here, not through ``_token``'s cache: an array kept by both, evicted from one, would
        # count twice against the words a process keeps.
        buckets = _buckets(prefix, token, chars)
        return buckets, sum(map(self._w.__getitem__, buckets))

    def of(self, prefix: str, chars: tuple[int, ...]) -> Callable[[str], _Summed]:
        """``token -> (its buckets, their weights' sum)`` for words read with ``prefix`` and ``chars``."""
        summed = self._by_prefix.get((prefix, chars))
        if summed is None:
            fresh = functools.partial(self._sum, prefix, chars)
            cached = functools.lru_cache(maxsize=WORDS.get(prefix, 1 << 12))(fresh)

            def summed(token: str) -> _Summed:
                return cached(token) if len(token) <= _CACHED_CHARS else fresh(token)

            self._by_prefix[prefix, chars] = summed
        return summed


# The bucket of a named feature (a word pair of the turn, a system prompt's word, a text feature), kept
# for the most recently used: the common ones recur from one request to the next, and a look-up is a
# third of hashing one. ``NAMES`` in each of the two caches, of at most ``_CACHED_NAME`` characters each
# (a longer one, a pair of long runs of letters, is hashed each time), so about 1 MB each however they
# fill.
NAMES = 1 << 12
_CACHED_NAME = 2 * _CACHED_CHARS + 8
_named_cached = functools.lru_cache(maxsize=NAMES)(_bucket)


def _named_bucket(name: str) -> int:
    return _named_cached(name) if len(name) <= _CACHED_NAME else _bucket(name)


def _short(names: Collection[str]) -> bool:
    """Every name fits a cache entry: the block looks its names up without a check per name."""
    return not names or max(map(len, names)) <= _CACHED_NAME


@functools.lru_cache(maxsize=NAMES)
def _text_cached(feature: str) -> int:
    return _bucket("x:" + feature)


def _text_bucket(feature: str) -> int:
    """The bucket of a text feature (``text.py``'s name, read as ``x:<name>``)."""
    return _text_cached(feature) if len(feature) <= _CACHED_NAME else _bucket("x:" + feature)


def _words_part(
    text: str, prefix: str, chars: tuple[int, ...], pairs: bool, weight: float, w: Weights, cache: ScoreCache
) -> float:
    """``_weighted`` of a block of words with their character n-grams (and word pairs): the dot product is
    the words' sums (``cache``) plus the pairs' weights, a linear sum; the length needs the merged counts."""
    tokens = _WORD.findall(text)
    if not tokens:
        return 0.0
    summed = list(map(cache.of(prefix, chars), tokens))
    counts = Counter(itertools.chain.from_iterable([buckets for buckets, _ in summed]))
    total = sum([word for _, word in summed])
    if pairs:
        names = [prefix + "b:" + a + " " + b for a, b in itertools.pairwise(tokens)]
        paired = list(map(_named_cached if _short(names) else _named_bucket, names))
        counts.update(paired)
        total += sum(map(w.__getitem__, paired))
    values = list(counts.values())
    norm: float = (sum(map(operator.mul, values, values)) + _PRIOR) ** 0.5
    return weight / norm * total


def _named_part(names: Iterable[int], weight: float, w: Weights) -> float:
    """``_weighted`` of the buckets of a block of distinct names. They differ but for a rare collision, and
    then each counts 1: the length is the number of names and the dot product the sum of their weights."""
    buckets = list(names)
    if not buckets:
        return 0.0
    if len(set(buckets)) < len(buckets):
        return _weighted(Counter(buckets), weight, w)
    norm: float = (len(buckets) + _PRIOR) ** 0.5
    return weight / norm * sum(map(w.__getitem__, buckets))


def dot(
    w: Weights, newest: str, system: str = "", earlier: str = "", cache: ScoreCache | None = None
) -> tuple[float, float, frozenset[str]]:
    """``vectorize``'s vector dotted with the weights ``w``, computed block by block without building it:
    (the newest turn's part, the context's part, the shape features). The same recipe, in a third of
    the time: the scorer runs on every request routed by policy, an explanation only on a dry run.
    ``cache``: the model's :class:`ScoreCache` (a fresh one otherwise)."""
    cache = cache or ScoreCache(w)
    if cache.kernel is not None:
        try:
            return _compiled(cache.kernel, w, newest, system, earlier, cache)
        except UnicodeEncodeError:
            pass  # a lone surrogate, which UTF-8 cannot encode: the reference reads it (surrogatepass)
    turn = _words_part(_normal(_clip(newest)), "t:", _CHARS, True, _TURN, w, cache)
    text = featurize_blocks(newest)
    for part in (text.words, text.pairs, text.pasted):
        turn += _named_part(map(_text_cached if _short(part) else _text_bucket, part), _TEXT, w)
    context = 0.0
    if system:
        context += cache.system(_clip(system))
    if earlier:
        context += _words_part(_normal(_clip(earlier)), "prev:", (3,), False, _EARLIER, w, cache)
    return turn, context, frozenset(text.shape)


def _share(sums: tuple[int, int], weight: float) -> float:
    """A block's share of the logit from the kernel's sums: as ``_weighted`` computes it from its counts
    (the same integers, so the same float)."""
    sumsq, total = sums
    if not sumsq:
        return 0.0
    norm: float = (sumsq + _PRIOR) ** 0.5
    return weight / norm * total


def _compiled(
    kernel: Kernel, w: Weights, newest: str, system: str, earlier: str, cache: ScoreCache
) -> tuple[float, float, frozenset[str]]:
    """``dot`` through the compiled kernel: every block hashed and summed in C, and the text features of
    ASCII text (or of its ASCII twin) found there too; the same blocks, added in the same order."""
    turn = _share(kernel.words(_WORD.findall(_normal(_clip(newest))), "t:", _CHARS, True, w), _TURN)
    twin = ascii_twin(newest)
    sums = None if twin is None else kernel.text_sums(twin, cache.tables, w)
    if sums is None:  # beyond ASCII: text.py finds the features, the kernel hashes them
        text = featurize_blocks(newest)
        for part in (text.words, text.pairs, text.pasted):
            turn += _share(kernel.names(part, "x:", w), _TEXT)
        shape = frozenset(text.shape)
    else:
        words, pairs, pasted, names = sums
        turn += _share(words, _TEXT)
        turn += _share(pairs, _TEXT)
        turn += _share(pasted, _TEXT)
        shape = frozenset(names)
    context = 0.0
    if system:
        context += cache.system(_clip(system))
    if earlier:
        tokens = _WORD.findall(_normal(_clip(earlier)))
        context += _share(kernel.words(tokens, "prev:", (3,), False, w), _EARLIER)
    return turn, context, shape
