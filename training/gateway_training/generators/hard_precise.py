# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard requests whose answer is exact and takes careful steps, written in plain words with no maths
notation: the kind a diffusion model, writing a whole block at once, gets subtly wrong.

- gen:exact-strings: work on letters, words and symbols: sorting words, spelling backwards, counting
  letters, joining first or last letters, shifting letters through the alphabet, evaluating True/False
  expressions, closing a sequence of brackets.
- gen:judgement-options: a judgement about language or logic with lettered options: the correct
  adjective order, who a pronoun refers to, whether a sports sentence is plausible, which line is
  sarcastic, when in a day's timeline something could have happened.

Every prompt is built here from word lists of this module; the answers are computed, so a follow-up
turn can quote one.

Over 400 lines on purpose: two sources of ten small families, mostly word lists and templates that the
formatter sets one item a line.
"""

from __future__ import annotations

import random
import string

from gateway_training.generators.hard_common import (
    LICENCE,
    NAMES,
    Messages,
    ask,
    conversation,
    number_word,
    pick,
    sample,
)
from gateway_training.sources import Source

__all__ = ["SOURCES"]

_WORDS = (
    "harbour", "lantern", "meadow", "pepper", "quiver", "saddle", "thimble", "velvet", "walnut", "anchor",
    "biscuit", "cobalt", "dagger", "ember", "falcon", "garnet", "hazel", "island", "juniper", "kettle",
    "lemon", "marble", "nectar", "orchid", "pillow", "quartz", "raven", "silver", "tundra", "umber",
    "violet", "willow", "yonder", "zephyr", "almond", "bramble", "candle", "drizzle", "fable", "glacier",
    "hammock", "igloo", "jasmine", "kayak", "ledger", "mosaic", "nutmeg", "oyster", "pebble", "riddle",
    "strawberry", "banana", "committee", "mississippi", "bookkeeper", "parallel", "occurrence", "balloon",
)  # fmt: skip
_SENTENCES = (
    "the quick brown fox jumps over the lazy dog",
    "a stitch in time saves nine",
    "every cloud has a silver lining",
    "the early bird catches the worm",
    "practice makes perfect but nobody is perfect",
    "she sells sea shells by the sea shore",
    "all that glitters is not gold",
    "my train was late again this morning",
    "we planted seven apple trees behind the barn",
    "the library closes early on public holidays",
)
_OPEN_CLOSE = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _words(rng: random.Random, lo: int = 4, hi: int = 9) -> list[str]:
    return sample(rng, _WORDS, rng.randint(lo, hi))


def _listing(rng: random.Random, words: list[str]) -> str:
    style = rng.randrange(4)
    if style == 0:
        return ", ".join(words)
    if style == 1:
        return " ".join(words)
    if style == 2:
        return "\n".join(f"- {w}" for w in words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _sorting(rng: random.Random) -> tuple[str, str]:
    words = _words(rng)
    listing = _listing(rng, words)
    k = rng.randint(2, len(words))
    body = pick(
        rng,
        (
            f"Sort these words alphabetically: {listing}",
            f"Put the following words in dictionary order:\n{listing}",
            f"Alphabetize this list: {listing}",
            f"Which of these words comes {_ordinal(k)} in alphabetical order? {listing}",
            f"Sort these words in reverse alphabetical order, Z to A: {listing}",
            f"Order these words by length, shortest first, and alphabetically when two have the same length: {listing}",
        ),
    )
    return body, "In order: " + ", ".join(sorted(words)) + "."


_ORDINALS = {
    1: "first",
    2: "second",
    3: "third",
    4: "fourth",
    5: "fifth",
    6: "sixth",
    7: "seventh",
    8: "eighth",
    9: "ninth",
}


def _ordinal(n: int) -> str:
    return _ORDINALS.get(n, f"{n}th")


def _spelling(rng: random.Random) -> tuple[str, str]:
    word = pick(rng, _WORDS)
    sentence = pick(rng, _SENTENCES)
    letter = pick(rng, sorted(set(word)))
    body = pick(
        rng,
        (
            f"Spell the word '{word}' backwards.",
            f"How many times does the letter {letter} appear in the word {word}?",
            f"Count the letter '{letter}' in this sentence: {sentence}",
            f"Reverse the order of the words in this sentence: {sentence}",
            f"How many words in '{sentence}' have more than four letters?",
            f"Write every word of this sentence backwards, keeping the words in their places: {sentence}",
            f"Count the vowels in '{sentence}'.",
            f"What is the {_ordinal(rng.randint(2, min(6, len(word))))} letter of '{word}' counting from the end?",
        ),
    )
    return body, f"Letter by letter: {' '.join(word)}; backwards {word[::-1]}."


def _letters(rng: random.Random) -> tuple[str, str]:
    names = sample(rng, NAMES, rng.randint(3, 6))
    joined = " ".join(names) if rng.random() < 0.5 else ", ".join(names)
    shift = rng.randint(1, 5)
    word = pick(rng, _WORDS)
    coded = "".join(string.ascii_lowercase[(string.ascii_lowercase.index(c) + shift) % 26] for c in word)
    body = pick(
        rng,
        (
            f'Take the last letter of each word in "{joined}" and put them together.',
            f"Concatenate the first letters of these names: {joined}",
            f"Join the second letter of every name in this list, in order: {joined}",
            f"Shift every letter of '{word}' forward by {number_word(shift)} places in the alphabet. What do you get?",
            f"Each letter of this word was moved {number_word(shift)} places forward in the alphabet: {coded}. What was the original word?",
            f"Replace every vowel in '{word}' with the next vowel (a->e, e->i, i->o, o->u, u->a).",
        ),
    )
    return body, "Last letters: " + "".join(n[-1] for n in names) + "."


def boolean_expression(rng: random.Random, depth: int) -> tuple[str, bool]:
    """A True/False expression with and, or, not and brackets, written as Python would read it, and its
    value. Every compound part is bracketed; the outermost brackets are sometimes left off."""
    text, value = _boolean_part(rng, max(depth, 1))
    while " and " not in text and " or " not in text:  # a bare value is no exercise
        text, value = _boolean_part(rng, max(depth, 1))
    if text.startswith("( ") and rng.random() < 0.4:
        text = text[2:-2]
    return text, value


def _boolean_part(rng: random.Random, depth: int) -> tuple[str, bool]:
    if depth == 0 or rng.random() < 0.3:
        value = rng.random() < 0.5
        if rng.random() < 0.3:
            return f"not {value}", not value
        return str(value), value
    left, lv = _boolean_part(rng, depth - 1)
    right, rv = _boolean_part(rng, depth - 1)
    op = pick(rng, ("and", "or"))
    value = (lv and rv) if op == "and" else (lv or rv)
    if rng.random() < 0.2:
        return f"not ( {left} {op} {right} )", not value
    return f"( {left} {op} {right} )", value


def _booleans(rng: random.Random) -> tuple[str, str]:
    expression, value = boolean_expression(rng, rng.randint(2, 3))
    a, b, c = (rng.random() < 0.5 for _ in range(3))
    state = f"A is {str(a).lower()}, B is {str(b).lower()} and C is {str(c).lower()}"
    body = pick(
        rng,
        (
            f"Evaluate: {expression}",
            f"{expression} is",
            f"True or false: {expression}",
            f"What does this boolean expression evaluate to? {expression}",
            f'{state}. Is "(A and not B) or (B and C)" true or false?',
            f"{state}. Which of these hold: A or B; not (A and C); B or not C?",
        ),
    )
    return body, f"Working from the innermost brackets outwards, it is {value}."


def bracket_sequence(rng: random.Random) -> tuple[str, str]:
    """An unfinished sequence of brackets (some pairs closed inside it) and what closes it."""
    opens = [pick(rng, tuple(_OPEN_CLOSE)) for _ in range(rng.randint(3, 7))]
    # Some pairs already closed inside, so the open ones are not simply the whole sequence.
    seq: list[str] = []
    stack: list[str] = []
    for o in opens:
        seq.append(o)
        stack.append(o)
        if rng.random() < 0.35:
            seq.append(_OPEN_CLOSE[stack.pop()])
    return " ".join(seq), " ".join(_OPEN_CLOSE[o] for o in reversed(stack))


def _brackets(rng: random.Random) -> tuple[str, str]:
    shown, closing = bracket_sequence(rng)
    closers = closing.split()  # innermost first
    if rng.random() < 0.5:
        closers.reverse()  # then balanced only when the open brackets happen to close either way
    broken = " ".join([shown, *closers])
    body = pick(
        rng,
        (
            f"Complete the rest of the sequence, making sure that the brackets are closed properly: {shown}",
            f"Close every bracket in this sequence in the right order: {shown}",
            f"Is this sequence of brackets balanced? {broken}",
            f'What do I need to append to "{shown}" so that every bracket is matched?',
        ),
    )
    return body, f"The brackets still open, innermost first, close as: {closing or 'nothing'}."


def _exact_strings(rng: random.Random) -> Messages:
    body, answer = pick(rng, (_sorting, _spelling, _letters, _booleans, _brackets))(rng)
    return conversation(
        rng,
        ask(rng, body),
        answer=answer,
        followups=(
            "now do it the other way round",
            "are you sure? check again letter by letter",
            "and if the list were twice as long?",
            "explain how you got that",
            "do the same for the next one: walnut",
        ),
    )


# ---- judgements with options ---------------------------------------------------------------------------

# Adjectives by the order English puts them in: opinion, size, age, shape, colour, origin, material, purpose.
_ADJECTIVES = (
    ("lovely", "ugly", "wonderful", "terrible", "nice", "obnoxious", "good", "silly"),
    ("big", "small", "enormous", "tiny", "large", "little", "huge", "medium-size"),
    ("old", "new", "ancient", "brand-new", "old-fashioned", "archaic"),
    ("square", "round", "triangular", "rectangular", "circular", "spherical"),
    ("red", "blue", "green", "grey", "white", "black", "brown", "purple"),
    ("Italian", "Japanese", "Brazilian", "Turkish", "Mexican", "Egyptian", "Indian", "Russian"),
    ("wooden", "plastic", "steel", "glass", "paper", "cloth", "wool", "leather"),
    ("drinking", "walking", "hiking", "smoking", "exercise", "eating", "snorkeling"),
)
_NOUNS = ("box", "ship", "sweater", "knife", "car", "cat", "shoe", "lamp", "chair", "bowl", "table", "bag")


def _letters_options(options: list[str]) -> str:
    return "\n".join(f"({string.ascii_uppercase[i]}) {o}" for i, o in enumerate(options))


def _adjective_order(rng: random.Random) -> tuple[str, str]:
    kinds = sorted(sample(rng, range(len(_ADJECTIVES)), rng.randint(3, 5)))
    words = [pick(rng, _ADJECTIVES[k]) for k in kinds]
    noun = pick(rng, _NOUNS)
    right = " ".join([*words, noun])
    shuffled = list(words)
    while shuffled == words:
        rng.shuffle(shuffled)
    wrong = " ".join([*shuffled, noun])
    options = [right, wrong] if rng.random() < 0.5 else [wrong, right]
    body = pick(
        rng,
        (
            f"Which sentence has the correct adjective order?\nOptions:\n{_letters_options(options)}",
            f"Which of these sounds right to a native speaker, and why?\n{_letters_options(options)}",
            f"Pick the phrase whose adjectives are in the standard English order: {options[0]} / {options[1]}",
        ),
    )
    return body, f"'{right}' follows opinion, size, age, shape, colour, origin, material, purpose."


_ROLES = (
    "mechanic", "customer", "teacher", "student", "doctor", "patient", "chef", "waiter", "lawyer", "client",
    "manager", "intern", "pilot", "passenger", "librarian", "visitor", "developer", "designer", "nurse", "surgeon",
)  # fmt: skip
_CLAUSES = (
    ("told", "that {p} would be late"),
    ("thanked", "because {p} had stayed after hours"),
    ("called", "because {p} needed the report by Friday"),
    ("asked", "whether {p} could help with the form"),
    ("warned", "that {p} had made a mistake"),
    ("emailed", "after {p} finished the review"),
)


def _pronoun(rng: random.Random) -> tuple[str, str]:
    a, b = sample(rng, _ROLES, 2)
    verb, clause = pick(rng, _CLAUSES)
    pronoun = pick(rng, ("he", "she", "they"))
    sentence = f"The {a} {verb} the {b} {clause.format(p=pronoun)}."
    options = [
        f"The {a} {'was' if pronoun != 'they' else 'were'} the one",
        f"The {b} {'was' if pronoun != 'they' else 'were'} the one",
        "Ambiguous",
    ]
    body = pick(
        rng,
        (
            f"In the following sentence, explain the antecedent of the pronoun (which thing the pronoun refers to), or state that it is ambiguous.\nSentence: {sentence}\nOptions:\n{_letters_options(options)}",
            f"Who does '{pronoun}' refer to in this sentence, and how can you tell? \"{sentence}\"",
            f'"{sentence}" Is the pronoun here clear or ambiguous? Answer A, B or C.\n{_letters_options(options)}',
        ),
    )
    return body, "Both people fit the pronoun grammatically, so only the verb's usual roles can decide."


_SPORTS = (
    (
        "football",
        ("scored a penalty kick", "headed the ball into the net", "was offside", "took a corner"),
        ("in the World Cup final", "in the Champions League semi-final"),
    ),
    (
        "basketball",
        ("hit a three-pointer", "made a slam dunk", "drew a foul on the fast break"),
        ("in the NBA Finals", "in the fourth quarter"),
    ),
    (
        "baseball",
        ("hit a home run", "struck out the batter", "stole second base"),
        ("in the World Series", "in the bottom of the ninth"),
    ),
    (
        "tennis",
        ("served an ace", "hit a backhand down the line", "won the tie-break"),
        ("at Wimbledon", "in the fifth set"),
    ),
    (
        "ice hockey",
        ("scored on the power play", "took a slapshot", "was sent to the penalty box"),
        ("in the Stanley Cup final", "in overtime"),
    ),
    (
        "American football",
        ("threw a touchdown pass", "kicked a field goal", "was sacked"),
        ("in the Super Bowl", "in the red zone"),
    ),
)
_ATHLETES = (
    "Marta Quill",
    "Dario Venn",
    "Kenji Arakawa",
    "Lotte Brandt",
    "Samir Haddad",
    "Ines Duarte",
    "Tobias Krall",
    "Aylin Ersoy",
)


def _plausible(rng: random.Random) -> tuple[str, str]:
    (sport, actions, events), (_, _, other_events) = sample(rng, _SPORTS, 2)
    action = pick(rng, actions)
    event = pick(rng, events if rng.random() < 0.5 else other_events)
    player = pick(rng, _ATHLETES)
    sentence = f"{player} {action} {event}."
    body = pick(
        rng,
        (
            f'Is the following sentence plausible? "{sentence}"',
            f"Determine whether this sentence makes sense as sports commentary: {sentence}",
            f"Plausible or implausible: {sentence} Explain.",
        ),
    )
    return (
        body,
        f"'{action}' belongs to {sport}; the sentence is plausible only if '{event}' is a {sport} occasion too.",
    )


_SARCASM = (
    (
        "Oh wonderful, another meeting that could have been an email.",
        "Another meeting is scheduled; it could have been an email.",
    ),
    (
        "Great, my flight is delayed again. Just what I needed today.",
        "My flight is delayed again, which is not what I needed today.",
    ),
    (
        "Sure, because leaving the milk out overnight always ends well.",
        "Leaving the milk out overnight made it go sour.",
    ),
    ("I just love it when my phone dies at 40% battery.", "My phone died at 40% battery, which is annoying."),
    (
        "Yes, rewriting the whole app the day before launch is a brilliant plan.",
        "Rewriting the whole app the day before launch is a risky plan.",
    ),
    (
        "Nothing says relaxing like a six-hour queue at the airport.",
        "A six-hour queue at the airport is not relaxing.",
    ),
)


def _sarcasm(rng: random.Random) -> tuple[str, str]:
    picked = sample(rng, _SARCASM, 2)
    sarcastic = pick(rng, picked)[0]
    options = [pair[rng.randrange(2)] for pair in picked]
    if sarcastic not in options:
        options[0] = sarcastic
    rng.shuffle(options)
    body = pick(
        rng,
        (
            f"Which statement is sarcastic?\nOptions:\n{_letters_options(options)}",
            f"One of these is meant ironically. Which one, and what gives it away?\n{_letters_options(options)}",
        ),
    )
    return body, f"'{sarcastic}' says the opposite of what it means."


_PLACES = (
    "the bakery",
    "the library",
    "the gym",
    "the post office",
    "the museum",
    "the park",
    "the bank",
    "the dentist",
    "the market",
    "the cinema",
)


def _timeline(rng: random.Random) -> tuple[str, str]:
    person = pick(rng, NAMES)
    target = pick(rng, _PLACES)
    start = rng.choice((5, 6, 7))
    blocks: list[tuple[int, int, str, str]] = []
    t = start
    free: tuple[int, int] | None = None
    witnesses = sample(rng, [n for n in NAMES if n != person], 5)
    places = sample(rng, [p for p in _PLACES if p != target], 5)
    for i in range(5):
        length = rng.randint(1, 3)
        if free is None and (i == 2 or rng.random() < 0.25):
            free = (t, t + length)
        else:
            blocks.append((t, t + length, witnesses[i], places[i]))
        t += length
    if free is None:
        free = (t, t + 2)
        t += 2
    closes = t

    def clock(h: int) -> str:
        return f"{(h - 1) % 12 + 1}{'am' if h < 12 else 'pm'}"

    facts = "\n".join(f"{w} saw {person} at {p} from {clock(a)} to {clock(b)}." for a, b, w, p in blocks)
    choices = [(free[0], free[1]), *[(a, b) for a, b, _, _ in blocks[:3]]]
    rng.shuffle(choices)
    body = (
        f"Today, {person} went to {target}. Between what times could they have gone?\nWe know that:\n"
        f"{person} woke up at {clock(start)}.\n{facts}\n{target.capitalize()} was closed after {clock(closes)}.\n"
        f"Options:\n{_letters_options([f'{clock(a)} to {clock(b)}' for a, b in choices])}"
    )
    return body, f"The only stretch nobody saw {person} is {clock(free[0])} to {clock(free[1])}."


def _judgement_options(rng: random.Random) -> Messages:
    body, answer = pick(rng, (_adjective_order, _pronoun, _plausible, _sarcasm, _timeline))(rng)
    return conversation(
        rng,
        ask(rng, body),
        answer=answer,
        followups=(
            "why not the other option?",
            "are you sure? one of the others looks right to me",
            "explain your choice step by step",
            "ok, and which one is the worst?",
        ),
    )


SOURCES: tuple[Source, ...] = (
    Source("gen:exact-strings", "hard", "reasoning", LICENCE, _exact_strings),
    Source("gen:judgement-options", "hard", "reasoning", LICENCE, _judgement_options),
)
