"""The scorer's compiled kernel (gateway/routing/scorer/_kernel.c) against its pure-Python reference.

The kernel is optional at install time; where it was built, every score must be the one the reference
gives, bit for bit: these tests compare the two on generated text in several scripts and on the routing
corpus sample that ``test_router_scorer`` records a digest of, and the text features the kernel finds in
ASCII text with text.py's, by name, on written cases that reach each feature and on generated text. In
CI the kernel must have been built (the test install has a C compiler): a build that silently fell back
would leave it untested.
"""

from __future__ import annotations

import itertools
import os
import random
from array import array
from collections import Counter
from types import ModuleType

import pytest

from gateway.routing.scorer import vector
from gateway.routing.scorer.compiled import ascii_twin, kernel_tables
from gateway.routing.scorer.load import load_model
from gateway.routing.scorer.model import ScorerModel
from gateway.routing.scorer.text import featurize_blocks
from tests.test_router_scorer import _corpus_sample


@pytest.fixture(scope="module")
def kernel() -> ModuleType:
    try:
        from gateway.routing.scorer import _kernel
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("the scorer's kernel was not built: the test install compiles it (pyproject.toml)")
        pytest.skip("the scorer's kernel was not built (no C compiler at install time)")
    return _kernel


@pytest.fixture(scope="module")
def models() -> tuple[ScorerModel, ScorerModel]:
    """The shipped model twice: with the kernel, and on the pure-Python reference."""
    shipped = load_model()
    reference = ScorerModel(
        shipped.weights,
        shipped.shape,
        shipped.bias,
        scale=shipped.scale,
        calibration=shipped.calibration,
        threshold=shipped.threshold,
        compiled=False,
    )
    return shipped, reference


# Letters of several scripts and widths in UTF-8 (1 to 4 bytes), digits, and the characters the word
# pattern splits on.
_ALPHABET = "abcxyz0 9_ éüßñ жщ ع 日本語 한 😀🙂 .,!?\n"


def _tokens(rng: random.Random) -> list[str]:
    return [
        "".join(rng.choice(_ALPHABET.replace(" ", "")) for _ in range(rng.choice((1, 2, 3, 5, 9, 40))))
        for _ in range(rng.randint(0, 25))
    ]


def _text(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(size))


def _reference_words(tokens: list[str], prefix: str, chars: tuple[int, ...], pairs: bool, w: array[int]):
    counts: Counter[int] = Counter()
    for token in tokens:
        counts.update(vector._buckets(prefix, token, chars))
    if pairs:
        counts.update(vector._bucket(prefix + "b:" + a + " " + b) for a, b in itertools.pairwise(tokens))
    return sum(c * c for c in counts.values()), sum(c * w[b] for b, c in counts.items())


def test_buckets_are_the_reference_crc32_of_the_utf8_name(kernel: ModuleType) -> None:
    for name in ["", "t:w:hi", "x:b:0 apples", "sys:w:ü", "t:c: 日本", "prev:c:😀 ", "a" * 300]:
        assert kernel.bucket(name) == vector._bucket(name), name


def test_word_blocks_sum_as_the_reference_counts(kernel: ModuleType, models) -> None:
    w = models[0].weights
    rng = random.Random(7)
    for _ in range(1500):
        tokens = _tokens(rng)
        for prefix, chars, pairs in (("t:", (2, 3, 4), True), ("prev:", (3,), False), ("t:", (), True)):
            expected = _reference_words(tokens, prefix, chars, pairs, w)
            assert kernel.words(tokens, prefix, chars, pairs, w) == expected, (tokens, prefix)


def test_repeated_features_count_in_the_squared_length(kernel: ModuleType, models) -> None:
    w = models[0].weights
    # "aa" repeats its n-grams inside itself and across the three words: counts of 2 to 6.
    tokens = ["aa", "aa", "aaa"]
    sumsq, total = kernel.words(tokens, "t:", (2, 3, 4), True, w)
    assert (sumsq, total) == _reference_words(tokens, "t:", (2, 3, 4), True, w)
    assert sumsq > sum(1 + 3 + 2 + 1 for _ in tokens)  # more than if every feature counted once
    names = ["hello", "hello", "world"]
    counts = Counter(vector._bucket("sys:w:" + n) for n in names)
    assert kernel.names(names, "sys:w:", w) == (
        sum(c * c for c in counts.values()),
        sum(c * w[b] for b, c in counts.items()),
    )


def test_name_blocks_read_any_iterable_of_names(kernel: ModuleType, models) -> None:
    w = models[0].weights
    names = {"w:hello", "b:0 apples", "p:naïve", "s:x"}
    expected = (len(names), sum(w[vector._bucket("x:" + n)] for n in names))
    assert kernel.names(names, "x:", w) == expected
    assert kernel.names(iter(sorted(names)), "x:", w) == expected
    assert kernel.names([], "x:", w) == (0, 0)


def test_the_kernel_refuses_what_it_cannot_read(kernel: ModuleType, models) -> None:
    w = models[0].weights
    with pytest.raises(TypeError):
        kernel.words(["a"], "t:", (2,), True, array("d", bytes(8 << 20)))  # floats: the reference's
    with pytest.raises(TypeError):
        kernel.words(["a"], "t:", (2,), True, array("h", [0]))  # not 2**20 weights
    with pytest.raises(TypeError):
        kernel.words(["a", 1], "t:", (2,), True, w)
    with pytest.raises(ValueError):
        kernel.words(["a"], "t:", (9,), True, w)
    with pytest.raises(UnicodeEncodeError):
        kernel.names(["\ud800"], "x:", w)  # a lone surrogate: the reference hashes it (surrogatepass)


def test_a_model_uses_the_kernel_only_for_a_model_files_weights(kernel: ModuleType, models) -> None:
    shipped, reference = models
    assert shipped._cache.kernel is kernel
    assert reference._cache.kernel is None
    floats = ScorerModel(array("d", bytes(8 << 20)), {}, 0.0)  # floats, as a freshly trained model holds
    assert floats._cache.kernel is None
    assert floats.score("Hi! How was your weekend?").score == 0.5


def test_scores_equal_the_reference_bit_for_bit_on_the_corpus(kernel: ModuleType, models) -> None:
    shipped, reference = models
    sample = _corpus_sample()
    assert len(sample) > 400
    for request in sample:
        assert shipped.score(*request) == reference.score(*request), request


def test_scores_equal_the_reference_on_generated_text(kernel: ModuleType, models) -> None:
    shipped, reference = models
    rng = random.Random(11)
    cases = [
        ("", "", ""),
        ("Hi! How was your weekend?", "You are a friendly bot. " * 200, "Can you help?\nSure"),
        ("x" * 5000, "", "y" * 5000),  # past the clip, one word longer than any cache entry
        ("a lone surrogate \ud800 in the turn", "and \udfff in the persona", "and \ud83d earlier"),
        ("\uff26\uff55\uff4c\uff4c \uff21\uff22\uff23 \ufb01", "", ""),  # NFKC folds them
    ]
    cases += [(_text(rng, rng.randint(0, 400)), _text(rng, 60), _text(rng, 120)) for _ in range(300)]
    cases += [(_ascii_text(rng), _ascii_text(rng), _ascii_text(rng)) for _ in range(300)]
    # English as phones type it: the kernel reads its ASCII twin (text.ascii_twin).
    cases += [(_ascii_text(rng) + "\u2019s \u201cit\u201d \u2013 ok\u2026", "", "") for _ in range(100)]
    for request in cases:
        assert shipped.score(*request) == reference.score(*request), request


# Text that exercises every shape feature of text.py: the characters its patterns start on, and words
# of its lexicons, in random order and at lengths on both sides of the window and the payload split.
_PIECES = [
    *"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMZ0123456789",
    *" \n\t.,;:!?()[]{}<>/\\-+*=^$%#_|&`'\"~@\x1c\r",
    "how many ",
    "what time ",
    "wie viele ",
    " Bob",
    " Alice",
    ", Claire",
    "10:30",
    " pm",
    "3 am",
    "12/05/",
    "1.2.",
    " km",
    " hours",
    "\n\n",
    "f(x)",
    "g(2)",
    "\\frac",
    "\\le ",
    "$$",
    "x^2",
    "C#",
    "++",
    ":)",
    ":-)",
    "<3",
    "haha",
    "lol",
    "python ",
    "function ",
    "solve ",
    "integral ",
    "translate ",
    "feel ",
    "you ",
    "your ",
    "The ",
    "the ",
    "1. ",
    "12) ",
    "- ",
    "* ",
    "camelCase",
    "snake_case",
    "=>",
    "::",
    "&&",
    "||",
    "</",
    "a,b,c\n",
    "|x|y|",
    "Hi Jonas,\n\n",
]


def _ascii_text(rng: random.Random) -> str:
    size = rng.choice((0, 3, 10, 40, 120, 400, 1599, 1601, 2500))
    return "".join(rng.choice(_PIECES) for _ in range(size // 3 + 1))[:size]


def _features(kernel: ModuleType, text: str):
    got = kernel.text_features(text, kernel.tables(*kernel_tables()))
    reference = featurize_blocks(text)
    return got, (reference.words, reference.pairs, reference.pasted, reference.shape)


def test_text_features_are_text_pys_on_written_cases(kernel: ModuleType) -> None:
    cases = [
        "Hi! How was your weekend?",
        "",
        "How many apples? I have 3 km at 10:30 pm on 12/05/2024, costing $5 and 50%.",
        "Summarise this:\n\n" + "The cat sat on the mat. " * 40,  # an instruction, then its payload
        "The cat sat on the mat. " * 40 + "\n\nWhat did the cat do?",  # the payload before
        "Hi Jonas,\n\n" + "Thanks for the report. " * 30,  # a salutation opens the material
        "def foo():\n    return bar(x) => y && z || w {}\n`code` </a> camelCase snake_case",
        "Bob, Alice and Claire swap balls. Then Dave takes one. How many does Frank hold?",
        "Anna Berta Clara Dora Emil Franz Gustav Heinz " * 5 + "und so weiter " * 20,  # names, dense
        "x^2 + \\frac{1}{2} f(x) = g(y) $$ a^b \\le 3 \\geq 2",
        "- item one\n- item two\n1. first\n 12) second\n123. not a list\n\n\nnew para",
        "a,b,c\nd,e,f\ng,h,i\n",
        "|a|b|\n|c|d|\n",
        "lol haha :) :D <3 ^^ !! :-)",
        "What time is it? C# and c++ at 7am, 7 a.m. or 7 PM?",
        "   ?  ",
        "How was yours?\x1c ",
        "It costs 3 - 2 and 4 -5 or 6/ 7",  # "-" alone does not count as arithmetic
        "a" * 5000 + " tail question?",  # past the window
    ]
    for text in cases:
        got, expected = _features(kernel, text)
        assert got == expected, text


def test_text_features_are_text_pys_on_generated_text(kernel: ModuleType) -> None:
    rng = random.Random(5)
    for _ in range(3000):
        text = _ascii_text(rng)
        got, expected = _features(kernel, text)
        assert got == expected, text


def test_text_beyond_ascii_is_left_to_text_py(kernel: ModuleType, models) -> None:
    tables = kernel.tables(*kernel_tables())
    for text in ["naïve café", "I\u2019m fine", "日本語", "😀"]:
        assert kernel.text_features(text, tables) is None
        assert kernel.text_sums(text, tables, models[0].weights) is None
    with pytest.raises(ValueError):
        kernel.tables({}, ((), ()), ((), ()), (), 1200, 400)


_MARKS = ["\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014", "\u2026"]


def test_an_ascii_twin_has_the_features_of_its_text() -> None:
    """Curly quotes, dashes and the ellipsis replaced by '"': the same features, so the kernel may read
    the twin. Checked on text.py alone, kernel or not."""
    rng = random.Random(9)
    texts = [
        "I\u2019m off to the \u201cbig\u201d match \u2013 wish me luck\u2026 How\u2019s yours?",
        "\u2018Bob\u2019, Alice \u2014 and Claire: how many? 3\u20134 km",
    ]
    for _ in range(2000):
        text = list(_ascii_text(rng))
        for _ in range(rng.randint(1, 6)):
            text.insert(rng.randint(0, len(text)), rng.choice(_MARKS))
        texts.append("".join(text))
    for text in texts:
        twin = ascii_twin(text)
        assert twin is not None and twin.isascii()
        assert featurize_blocks(twin) == featurize_blocks(text), text
    assert ascii_twin("5 \u20ac") is None  # the euro sign is money, not a neutral mark
    assert ascii_twin("na\u00efve") is None
    assert ascii_twin("plain") == "plain"
