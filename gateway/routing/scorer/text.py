"""What the difficulty scorer reads in a piece of text: its words and the shape of the text.

``featurize`` turns text into a set of named binary features, the same at training and at run time:

- ``w:<word>`` and ``b:<word> <word>``: lowercased words and word pairs, numbers folded into ``0`` so that
  "7 apples" and "12 apples" are one feature.
- ``s:<what>=<bucket>`` (``s:<what>`` alone where only presence counts): the shape of the text: its numbers,
  numbers followed by a unit, clock times, dates, money, percentages, arithmetic, maths notation; question
  marks, and whether the text ends with one (``s:ends_with_question``), and then how long the closing question
  is, whether it asks about the listener ("How was yours?") and whether it holds a number; sentences, commas,
  list lines, tables, paragraphs; capitalised words in mid-sentence (``_MID_CAPITAL``: mostly names, "swaps
  with Bob, then Claire"; or ``s:names=dense`` when so many words are capitalised that they are German nouns);
  code-like identifiers and the punctuation of code; the register of chat (exclamations, laughter, emoticons,
  emoji); a question for a quantity ("how many", "wie viele"); and how many distinct words the text uses of
  each lexicon (programming terms, programming verbs, maths terms, the programming and maths terms together,
  transform verbs, words of feeling, opinion and company). Digits and punctuation read the same in any
  language; the units, laughter, quantity questions and lexicons, and the capitalised words that are not
  names, come from word lists (``gateway.routing.scorer.lexicons``), so those features know only the languages
  the lists cover. Counts are bucketed, so a linear model can weigh "three names and a question" differently
  from "one name" without any scaling. Length alone is not read: short hard requests ("Prove that ...") and
  long easy ones (a pasted article to summarise) are common, and a length bucket taught the model a shortcut
  that did not carry to new sources.
- ``p:<word>`` and ``ps:<what>=<bucket>``: when the turn is a short instruction and a long pasted text
  ("Summarise this:\n\n<an email>", "<a timetable>\n\nWhen do I arrive?"), the pasted text's words and
  shape, apart from the instruction's (and ``s:payload`` says the split was made): what is asked decides
  more than what is pasted.

Only a window of the text is read: its first ``HEAD_CHARS`` and last ``TAIL_CHARS`` characters. An
instruction sits at the start or the end of a long turn ("Summarise this: ...", "... Which ball does
Bob hold?"), and the cost stays flat however long the turn is (the bench's 1 MB turn costs what an
8,000-character one does). Everything here is one pass for the words (``str.translate`` and ``split``
on ASCII text, a regular expression otherwise; linear: no nested repetition), ``str.count`` and set
look-ups; the few other patterns run only on a window that holds the character they start with. The
word lists counted live in ``gateway.routing.scorer.lexicons``.

Over 400 lines on purpose: the whole recipe of the text features, each beside the reason it is read,
and the names the compiled kernel emits for them beside the tables that make them (its C code finds the
same features; ``tests/test_router_scorer_kernel.py`` holds the two equal).
"""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

from gateway.routing.scorer.lexicons import (
    CODE_TERMS,
    CODE_VERBS,
    DOMAIN,
    EMOTICONS,
    LAUGHTER,
    MATH_TERMS,
    MERIDIEM,
    NOT_NAMES,
    QUANTITY_AFTER,
    QUANTITY_WORDS,
    SECOND_PERSON,
    SOCIAL_TERMS,
    TRANSFORM_TERMS,
    UNITS,
)

__all__ = [
    "HEAD_CHARS",
    "KERNEL_MARKS",
    "KERNEL_SCALES",
    "TAIL_CHARS",
    "TextFeatures",
    "featurize",
    "featurize_blocks",
    "split_payload",
]

HEAD_CHARS = 1200
TAIL_CHARS = 400

_TOKEN = re.compile(r"\w+")
# Every ASCII character that ``\w`` does not match, as a space: on ASCII text, ``translate`` then
# ``split`` gives the tokens ``_TOKEN.findall`` does, in a third of the time (the long turn's 400 µs
# budget; the pattern builds a match per word, ``split`` only the strings).
_NOT_WORD = "".join(c if c.isalnum() or c == "_" else " " for c in map(chr, range(128)))
# The same for the bytes of Latin-1 text, and the marks beyond Latin-1 that Western text carries.
_NOT_WORD_LATIN1 = bytes(b if chr(b).isalnum() or b == 0x5F else 0x20 for b in range(256))
_MARKS = ("\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014", "\u2026", "\u20ac")
_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")
# Patterns that start with a literal character: ``re`` skips to each occurrence of it in C, where a
# pattern that starts with a class (``\d``, ``[a-z]``) is tried at every position, ~10 µs each on a
# 1,600-character window, a quarter of a long turn's 400 µs budget between them. Each one
# matches where the plain pattern in its comment would: the look-behind re-reads what came before.
_CLOCK = re.compile(r":(?<=\d:)[0-5]\d")  # \d:[0-5]\d
_AM_PM = re.compile(r"\d ?[ap]\.?m\b", re.IGNORECASE)
# \d[/.-]\d{1,2}[/.-]\d, one pattern per first separator.
_DATES = tuple(
    (sep, re.compile(re.escape(sep) + r"(?<=\d" + re.escape(sep) + r")\d{1,2}[/.-]\d")) for sep in "/.-"
)
_ARITHMETIC = re.compile(r"[\d)] ?[-+*×÷^=<>] ?[\d(a-z]")  # noqa: RUF001 (the multiplication sign itself)
# The same on ASCII text, where ``\d`` is [0-9]: a class of ASCII characters is a bitmap test, twice as
# fast as the Unicode digit category at each of the window's positions.
_ARITHMETIC_ASCII = re.compile(r"[0-9)] ?[-+*^=<>] ?[0-9(a-z]")
# Maths notation, each pattern run only when the text holds the character it needs (see _notation).
_LATEX = re.compile(r"\\(?:frac|int|sum|sqrt|lim|begin|mathbb|cdot|le|ge|neq|pi|binom|pmod)\b")
_MATH_SIGNS = tuple("≤≥≠∘π∑∏√∞∫∈∀∃⇒")  # counted with str.count, in C
_POWER = re.compile(r"[a-z0-9)]\^")
_FUNCTION = re.compile(r"\b[fgh]\([a-z0-9]\)")
# [a-z][A-Z], tried only at the capitals (rare in prose) where the plain pattern is tried at every
# lowercase letter; the pairs never overlap, so both count the same.
_CAMEL = re.compile(r"[A-Z](?<=[a-z][A-Z])")
# A capitalised word after a word or a comma on the same line: a name in the middle of a sentence
# ("swaps with Bob, then Claire"). One that opens a sentence or a line is how the sentence starts
# ("Never discuss politics.", "She gives two"): counted as names, a bot's rule list in a system prompt
# read as a puzzle's cast. Starts on the space, a literal that ``re`` skips to in C.
_MID_CAPITAL = re.compile(r" (?<=[\w,;)] )([A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ]+)")
_ARITHMETIC_CHARS = "+*=×÷^<>"  # noqa: RUF001
# ^[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t] in multi-line mode, read on "\n" + text.
_LIST_LINE = re.compile(r"\n[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]")
_CODE_CHARS = ("()", "=>", "::", "&&", "||", "{", "</", "`")
_SENTENCE_ENDS = (". ", "? ", "! ", ".\n")


def _label(count: int, edges: tuple[int, ...]) -> str:
    """``count`` as the label of its bucket: edges (1, 2, 4) give 0, 1, 2-3, 4+."""
    previous = 0
    for edge in edges:
        if count < edge:
            return str(previous) if edge - previous == 1 else f"{previous}-{edge - 1}"
        previous = edge
    return f"{previous}+"


def _scale(name: str, edges: tuple[int, ...]) -> tuple[str, ...]:
    """The names of feature ``name``'s buckets by count, up to the last edge: a count is looked up as
    ``scale[min(count, edges[-1])]``, the count's label worked out once per process."""
    return tuple(f"s:{name}={_label(count, edges)}" for count in range(edges[-1] + 1))


_FEW = (1, 2, 4)
_CODE_TERMS, _CODE_VERBS, _MATH_TERMS, _TRANSFORM_TERMS, _DOMAIN_TERMS, _CHATTY, _SOCIAL_TERMS = (
    _scale(name, _FEW)
    for name in (
        "code_terms",
        "code_verbs",
        "math_terms",
        "transform_terms",
        "domain_terms",
        "chatty",
        "social_terms",
    )
)
_ASKS_QUANTITY = _scale("asks_quantity", (1, 2))
_NUMBERS = _scale("numbers", (1, 2, 4, 7))
_NAMES = _scale("names", (1, 2, 3, 5))
_WITH_UNIT = _scale("with_unit", (1, 2, 3))
_ARITHMETIC_COUNT = _scale("arithmetic", _FEW)
_NOTATION = _scale("notation", (1, 3))
_QUESTIONS = _scale("questions", _FEW)
_CLOSING_QUESTION = _scale("closing_question", (1, 4, 7))
_SENTENCES = _scale("sentences", (1, 2, 4, 8, 16))
_COMMAS = _scale("commas", (1, 2, 4, 8))
_LIST = _scale("list", (1, 3, 6))
_PARAGRAPHS = _scale("paragraphs", _FEW)
_CODE = _scale("code", _FEW)


# The shape features' names as the compiled kernel (``_kernel.c``, through ``compiled.py``) emits them: the
# counted ones by count, in the order of its ``S_`` constants, and those present or not, in the order of
# its ``M_`` constants.
KERNEL_SCALES = (
    _CODE_TERMS,
    _CODE_VERBS,
    _MATH_TERMS,
    _TRANSFORM_TERMS,
    _DOMAIN_TERMS,
    _CHATTY,
    _SOCIAL_TERMS,
    _ASKS_QUANTITY,
    _NUMBERS,
    _NAMES,
    _WITH_UNIT,
    _ARITHMETIC_COUNT,
    _NOTATION,
    _QUESTIONS,
    _CLOSING_QUESTION,
    _SENTENCES,
    _COMMAS,
    _LIST,
    _PARAGRAPHS,
    _CODE,
)
KERNEL_MARKS = (
    "s:payload",
    "s:names=dense",
    "s:clock",
    "s:date",
    "s:money",
    "s:percent",
    "s:table",
    "s:ends_with_question",
    "s:asks_listener",
    "s:closing_number",
)


class TextFeatures(NamedTuple):
    """One text's features by block: the blocks whose weights the scorer damps on a long text
    (``words``, ``pairs``, ``pasted``: their sizes are what it damps by) apart from the rest."""

    words: set[str]  # w:
    pairs: set[str]  # b:
    pasted: set[str]  # p:
    shape: set[str]  # s:, ps:

    def union(self) -> set[str]:
        return self.words | self.pairs | self.pasted | self.shape


def featurize(text: str) -> set[str]:
    """The scorer's features of one piece of text (see the module's docstring)."""
    return featurize_blocks(text).union()


def featurize_blocks(text: str) -> TextFeatures:
    """``featurize``, block by block: built apart, they cost what one set does, and the scorer
    intersects each weight table with its own block."""
    long = len(text) > HEAD_CHARS + TAIL_CHARS
    window = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:] if long else text
    words: set[str] = set()
    pairs: set[str] = set()
    pasted: set[str] = set()
    shape: set[str] = set()
    instruction, payload = split_payload(window)
    _structure(instruction, _words(instruction, words, pairs), shape, "s:")
    if payload:
        # The pasted material has features of its own (p: words, ps: shape): a German article to
        # summarise shares its words and its numbers with German puzzles, and read as one text it
        # scores as a puzzle.
        shape.add("s:payload")
        pfolded = _folded(payload)
        pasted.update(map("p:".__add__, set(pfolded)))  # each word once: a third of a text's are repeats
        _structure(payload, pfolded, shape, "ps:")
    return TextFeatures(words, pairs, pasted, shape)


def split_payload(text: str) -> tuple[str, str]:
    """(instruction, payload): a short instruction and the long material it is about, before or after it.

    "Summarise this:\n\n<an email>" or "<a timetable>\n\nWhen do I arrive?"; ``(text, "")`` when the
    text is not so shaped. Two substring searches.
    """
    split = text.find("\n\n")
    # A first paragraph that ends in a comma is a salutation ("Hi Jonas,"), the start of the material.
    if 0 <= split <= 300 and len(text) - split > 2 * max(split, 100) and text[split - 1 : split] != ",":
        return text[:split], text[split + 2 :]
    split = text.rfind("\n\n")
    tail = len(text) - split
    if split > 0 and tail <= 300 and split > 2 * max(tail, 100):
        return text[split + 2 :], text[:split]
    return text, ""


def _folded(text: str) -> list[str]:
    """The lowercased words of ``text``, a number folded into "0": the quantity never makes a request
    harder, its presence may."""
    if text.isascii():
        # An ASCII word starts with a digit exactly when it sorts before ":" (digits are the only word
        # characters below it): a comparison in C, where ``str.isdigit`` is a method call per word.
        return ["0" if t < ":" else t for t in text.translate(_NOT_WORD).lower().split()]
    # Text in a Western European language: its punctuation beyond Latin-1 (curly quotes, dashes, the
    # ellipsis, the euro sign: none is a word character) becomes a space, then the Latin-1 bytes are
    # split as ASCII is, in C; half the time of the pattern, whose word test per character is the
    # Unicode database's. Other text (Greek, Cyrillic, emoji...) takes the pattern.
    for mark in _MARKS:
        if mark in text:
            text = text.replace(mark, " ")
    try:
        raw = text.encode("latin-1")
    except UnicodeEncodeError:
        words = list(map(str.lower, _TOKEN.findall(text)))
    else:
        words = raw.translate(_NOT_WORD_LATIN1).decode("latin-1").lower().split()
    return ["0" if t[0].isdigit() else t for t in words]


def _words(text: str, words: set[str], pairs: set[str]) -> list[str]:
    """Adds ``w:`` and ``b:`` features of ``text``; returns its folded words."""
    folded = _folded(text)
    # map() over str methods runs in C: half the time of the same comprehensions (the 400 µs budget).
    words.update(map("w:".__add__, set(folded)))
    # Each pair's string built once: a long turn repeats its pairs (a log, a table, a paste).
    pairs.update(["b:" + a + " " + b for a, b in set(itertools.pairwise(folded))])
    return folded


def _count_any(text: str, needles: tuple[str, ...]) -> int:
    """``sum(map(text.count, needles))``, counting only the needles whose first character the text
    holds: one character is found by memchr, a two-character needle counted at ~1 ns a character."""
    return sum(text.count(n) for n in needles if n[0] in text)


def _followed_by(words: list[str], cue: str, after: frozenset[str]) -> int:
    """How many times ``cue`` is followed by a word of ``after``. ``list.index`` finds each occurrence
    in C: a map over every word, once per cue, costs 10 µs a cue on a pasted page."""
    count, i = 0, -1
    last = len(words) - 1
    while True:
        try:
            i = words.index(cue, i + 1)
        except ValueError:
            return count
        if i < last and words[i + 1] in after:
            count += 1


def _closing_question(text: str, out: set[str]) -> None:
    """What the closing question asks: its length in words, whether it asks about the listener, and
    whether it holds a number.

    Without them a day told with its figures and closed by "How was yours?" or "Not bad, right?" reads
    as a word problem, which closes on a longer question about its figures ("How long does the trip take
    in all?"). The last sentence's length and its "you" carry over to sources the model never saw; its
    words as features of their own do not (docs/history/measurements.md). ``text`` ends with "?" and has no
    trailing space.
    """
    body = text[:-1]
    start = max(body.rfind("."), body.rfind("!"), body.rfind("?"), body.rfind("\n")) + 1
    words = _folded(body[start:])
    out.add(_CLOSING_QUESTION[min(len(words), 7)])
    if not SECOND_PERSON.isdisjoint(words):
        out.add("s:asks_listener")
    if "0" in words:  # "How long do 3 pumps take?": a word problem's question often holds a figure
        out.add("s:closing_number")


def _notation(text: str) -> int:
    count = 0
    if "\\" in text:
        count += len(_LATEX.findall(text))
    if "$$" in text:
        count += 1
    if "^" in text:
        count += len(_POWER.findall(text))
    if "(" in text and ("f(" in text or "g(" in text or "h(" in text):
        count += len(_FUNCTION.findall(text))
    if not text.isascii():
        count += sum(map(text.count, _MATH_SIGNS))
    return count


def _structure(text: str, folded: list[str], into: set[str], prefix: str) -> None:
    """Adds the shape features of ``text``, named ``<prefix><what>``."""
    if prefix == "s:":
        _shape(text, folded, into)
        return
    out: set[str] = set()
    _shape(text, folded, out)
    into.update(prefix + f[2:] for f in out)


def _shape(text: str, folded: list[str], out: set[str]) -> None:
    # List comprehensions, set operations and str methods only: a Python loop with branches per token
    # cost 3x as much.
    distinct = set(folded)
    # C++, C# and F# lose their sign to the word pattern: count them here.
    signed = int("++" in text or ("#" in text and ("C#" in text or "c#" in text or "F#" in text)))
    out.add(_CODE_TERMS[min(len(distinct & CODE_TERMS) + signed, 4)])
    out.add(_CODE_VERBS[min(len(distinct & CODE_VERBS), 4)])
    out.add(_MATH_TERMS[min(len(distinct & MATH_TERMS), 4)])
    out.add(_TRANSFORM_TERMS[min(len(distinct & TRANSFORM_TERMS), 4)])
    # Code or maths at all: a linear model cannot say "code terms OR maths terms" with two counts.
    out.add(_DOMAIN_TERMS[min(len(distinct & DOMAIN) + signed, 4)])
    # The register of chat: exclamations, laughter, emoticons and emoji. Small talk that mentions numbers
    # and names ("slept 5 hours because Priya kept texting") reads as a puzzle without it.
    chatty = text.count("!") + len(distinct & LAUGHTER) + _count_any(text, EMOTICONS)
    if not text.isascii():
        chatty += len(_EMOJI.findall(text))
    out.add(_CHATTY[min(chatty, 4)])
    out.add(_SOCIAL_TERMS[min(len(distinct & SOCIAL_TERMS), 4)])
    quantity = len(distinct & QUANTITY_WORDS)
    for cue in distinct & QUANTITY_AFTER.keys():
        quantity += _followed_by(folded, cue, QUANTITY_AFTER[cue])
    out.add(_ASKS_QUANTITY[min(quantity, 2)])
    numbers = folded.count("0")
    out.add(_NUMBERS[min(numbers, 7)])
    names = [t for t in set(_MID_CAPITAL.findall(text)) if t.lower() not in NOT_NAMES]
    if len(names) >= 5 and len(distinct) >= 30 and 4 * len(names) > len(distinct):
        # A quarter of the words capitalised is German nouns, not a cast of characters: a German text
        # to summarise had "s:names=5+", the mark of a puzzle.
        out.add("s:names=dense")
    else:
        out.add(_NAMES[min(len(names), 5)])
    if numbers:
        if numbers * 8 < len(folded):  # a few numbers: find each (see _followed_by)
            units = _followed_by(folded, "0", UNITS)
        else:  # many: the word after each number, in one pass in C
            after = itertools.compress(folded[1:], map("0".__eq__, folded))
            units = sum(map(UNITS.__contains__, after))
        out.add(_WITH_UNIT[min(units, 3)])
        # Each pattern runs only when the text holds what it needs: a pattern that starts with a digit
        # class is tried at every position, 10-20 µs a pattern on a 1,600-character window.
        if (":" in text and _CLOCK.search(text)) or (distinct & MERIDIEM and _AM_PM.search(text)):
            out.add("s:clock")
        if ("/" in text or "-" in text or (numbers > 2 and "." in text)) and any(
            sep in text and pattern.search(text) for sep, pattern in _DATES
        ):
            out.add("s:date")
        if any(c in text for c in "$€£¥"):
            out.add("s:money")
        if "%" in text:
            out.add("s:percent")
        if any(c in text for c in _ARITHMETIC_CHARS) or "/" in text:
            arithmetic = len((_ARITHMETIC_ASCII if text.isascii() else _ARITHMETIC).findall(text))
            if arithmetic:
                out.add(_ARITHMETIC_COUNT[min(arithmetic, 4)])
    notation = _notation(text)
    if notation:
        out.add(_NOTATION[min(notation, 3)])
    questions = text.count("?")
    out.add(_QUESTIONS[min(questions, 4)])
    stripped = text.rstrip()
    if stripped.endswith("?"):
        out.add("s:ends_with_question")
        _closing_question(stripped, out)
    sentences = _count_any(text, _SENTENCE_ENDS)
    out.add(_SENTENCES[min(sentences, 16)])
    commas = text.count(",")
    out.add(_COMMAS[min(commas, 8)])
    # A short instruction, a paragraph break, then a long payload: "Summarise this:\n\n<an email>".
    if "\n" in text:
        lines = len(_LIST_LINE.findall("\n" + text))
        if lines:
            out.add(_LIST[min(lines, 6)])
        # Three lines of two commas or more need six commas in all: the lines are read only then.
        if text.count("|") >= 6 or (
            commas >= 6 and sum(line.count(",") >= 2 for line in text.split("\n")) >= 3
        ):
            out.add("s:table")
        out.add(_PARAGRAPHS[min(text.count("\n\n") + 1, 4)])
    # camelCase and snake_case identifiers, and the punctuation of code.
    code = len(_CAMEL.findall(text)) + text.count("_") + _count_any(text, _CODE_CHARS)
    if code:
        out.add(_CODE[min(code, 4)])
