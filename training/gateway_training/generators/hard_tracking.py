# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard state-tracking prompts: objects through swaps and passes, navigation by turns, conditional counts.

Each prompt is a sequence of actions whose end state the answer depends on; the generator simulates the
sequence to write the assistant's answer in multi-turn examples.
"""

from __future__ import annotations

import random

from gateway_training.generators.hard_common import (
    LICENCE,
    NAMES,
    Messages,
    ask,
    conversation,
    maybe_words,
    number_word,
    pick,
    sample,
)
from gateway_training.sources import Source

__all__ = ["SOURCES"]

_ITEM_SETS = (
    ("a red ball", "a blue ball", "a green ball", "a yellow ball", "a white ball", "a black ball"),
    ("a novel", "a cookbook", "an atlas", "a comic", "a dictionary", "a poetry book"),
    ("a violin", "a flute", "a drum", "a trumpet", "a cello", "a harp"),
    ("a straw hat", "a beret", "a beanie", "a top hat", "a baseball cap", "a sun hat"),
    ("a mango", "a pear", "a kiwi", "a plum", "a lemon", "a fig"),
    ("a silver key", "a brass key", "a copper key", "an iron key", "a gold key", "a glass key"),
)
_SWAP_VERBS = (
    "{a} and {b} swap {what}",
    "{a} trades {what} with {b}",
    "{b} and {a} exchange {what}",
    "{a} swaps with {b}",
)


def _swaps(rng: random.Random) -> Messages:
    n = rng.randint(3, 6)
    people = sample(rng, NAMES, n)
    kind = rng.random()
    if kind < 0.55:
        item_set = pick(rng, _ITEM_SETS)
        items = sample(rng, item_set, n)
        holding = dict(zip(people, items, strict=True))
        what = pick(rng, ("items", "what they hold", "presents", "things"))
        steps = []
        for _ in range(rng.randint(n, n + 4)):
            a, b = sample(rng, people, 2)
            holding[a], holding[b] = holding[b], holding[a]
            steps.append(pick(rng, _SWAP_VERBS).format(a=a, b=b, what=what))
        intro = pick(
            rng,
            (
                "At the start " + ", ".join(f"{p} has {i}" for p, i in zip(people, items, strict=True)) + ".",
                "Starting positions: "
                + "; ".join(f"{p} holds {i}" for p, i in zip(people, items, strict=True))
                + ".",
                f"{number_word(n).capitalize()} friends each get one thing: "
                + ", ".join(f"{p} gets {i}" for p, i in zip(people, items, strict=True))
                + ".",
            ),
        )
        target = pick(rng, people)
        question = pick(
            rng,
            (
                f"What does {target} have at the end?",
                f"Which one does {target} end up with?",
                f"At the end, what is {target} holding?",
            ),
        )
        answer = f"{target} ends up with {holding[target]}."
    elif kind < 0.8:
        # Passing: one object moves hand to hand; some passes are conditional on who holds it.
        obj = pick(
            rng, ("the ball", "the baton", "the envelope", "the torch", "the parcel", "the talking stick")
        )
        holder = pick(rng, people)
        start = holder
        steps = []
        for _ in range(rng.randint(4, 8)):
            if rng.random() < 0.3:
                c = pick(rng, people)
                d = pick(rng, [p for p in people if p != c])
                steps.append(f"if {c} has {obj}, {c} gives it to {d}; otherwise nothing happens")
                if holder == c:
                    holder = d
            else:
                d = pick(rng, [p for p in people if p != holder])
                steps.append(f"whoever holds {obj} passes it to {d}")
                holder = d
        intro = f"{start} starts with {obj}. {', '.join(people)} stand in a circle."
        question = pick(rng, (f"Who has {obj} at the end?", f"Who ends up holding {obj}?"))
        answer = f"{holder} has {obj}."
    else:
        # Shell game: positions swap, the object stays under its cup.
        cups = pick(rng, (("left", "middle", "right"), ("first", "second", "third", "fourth")))
        m = len(cups)
        under = rng.randrange(m)
        obj = pick(rng, ("a coin", "a pea", "a ring", "a marble"))
        intro = (
            f"There are {number_word(m)} cups upside down in a row and {obj} is under the {cups[under]} cup."
        )
        steps = []
        last = (-1, -1)
        for _ in range(rng.randint(4, 7)):
            i, j = last
            while (i, j) == last:  # the same swap twice in a row would undo itself
                i, j = sorted(sample(rng, range(m), 2))
            last = (i, j)
            steps.append(f"the {cups[i]} and {cups[j]} cups are swapped")
            if under == i:
                under = j
            elif under == j:
                under = i
        question = f"Under which cup is {obj} now?"
        answer = f"It is under the {cups[under]} cup."
    joined = pick(rng, ("Then ", "Next, ", "After that, ", ""))
    seq_style = rng.random()
    if seq_style < 0.4:
        seq = " ".join(f"{joined}{s}." if k else s[0].upper() + s[1:] + "." for k, s in enumerate(steps))
    elif seq_style < 0.7:
        seq = "\n".join(f"{k + 1}. {s[0].upper() + s[1:]}" for k, s in enumerate(steps))
    else:
        seq = "First " + ", then ".join(steps[:-1]) + ", and finally " + steps[-1] + "."
    body = (
        intro
        + pick(rng, (" ", "\n"))
        + seq
        + ("\n" if seq_style < 0.7 else pick(rng, (" ", "\n")))
        + question
    )
    return conversation(
        rng,
        ask(rng, body),
        answer="Tracking each step in order: " + answer,
        followups=(
            "and what does everyone else end up with?",
            "What if the last two steps happened in the opposite order?",
            "Now do it again but skip the third step.",
            "now with one more round of the same swaps",
        ),
    )


# --- navigation ------------------------------------------------------------------------------------------

_DIRS = ("north", "east", "south", "west")
_DX = ((0, 1), (1, 0), (0, -1), (-1, 0))


def _navigation(rng: random.Random) -> Messages:
    facing = rng.randrange(4)
    start_facing = facing
    x = y = 0
    unit = pick(rng, ("blocks", "steps", "metres", "km", "squares", "paces"))
    steps: list[str] = []
    for _ in range(rng.randint(4, 9)):
        r = rng.random()
        if r < 0.22:
            facing = (facing + 3) % 4
            steps.append(pick(rng, ("turn left", "make a left turn", "turn 90 degrees to your left")))
        elif r < 0.44:
            facing = (facing + 1) % 4
            steps.append(pick(rng, ("turn right", "make a right", "turn a quarter turn clockwise")))
        elif r < 0.52:
            facing = (facing + 2) % 4
            steps.append(pick(rng, ("turn around", "do an about-face", "turn back the way you came")))
        else:
            k = rng.randint(1, 9)
            dx, dy = _DX[facing]
            x, y = x + dx * k, y + dy * k
            steps.append(
                pick(
                    rng,
                    (
                        "walk {k} {u}",
                        "go {k} {u} forward",
                        "move forward {k} {u}",
                        "walk {k} {u} straight ahead",
                    ),
                ).format(k=maybe_words(rng, k, 0.6), u=unit if k > 1 else unit.rstrip("s"))
            )
    style = rng.random()
    if style < 0.35:
        seq = ", ".join(steps[:-1]) + ", then " + steps[-1] + "."
    elif style < 0.65:
        seq = "\n".join(f"- {s}" for s in steps)
    else:
        seq = ". ".join(s[0].upper() + s[1:] for s in steps) + "."
    who = pick(rng, ("You", "A robot", "A hiker", "The delivery drone", "My dog walker", "A chess king"))
    intro = f"{who} start{'s' if who != 'You' else ''} facing {_DIRS[start_facing]}."
    q = rng.random()
    if q < 0.35:
        question = (
            "Which direction is it facing at the end?"
            if who != "You"
            else "Which way are you facing at the end?"
        )
        result = _DIRS[facing]
    elif q < 0.7:
        question = pick(
            rng,
            (
                "How far is the end point from the start, as the crow flies?",
                "Where does it end relative to the start?",
                "How many units east/west and north/south of the start does it end?",
            ),
        )
        result = f"{abs(x)} {'east' if x >= 0 else 'west'}, {abs(y)} {'north' if y >= 0 else 'south'}"
    else:
        question = pick(
            rng,
            (
                "Does it end where it started?",
                "Is the end point the starting point? If not, how do you get back in the fewest moves?",
            ),
        )
        result = (
            "yes"
            if x == y == 0
            else f"no, it is {abs(x)} {'east' if x >= 0 else 'west'} and {abs(y)} {'north' if y >= 0 else 'south'}"
        )
    if who == "You":
        for a, b in (
            ("it is", "you are"),
            ("does it end", "do you end"),
            ("Does it end", "Do you end"),
            ("it started", "you started"),
        ):
            question = question.replace(a, b)
    listed = 0.35 <= style < 0.65  # a bulleted route starts and ends on its own lines
    gap = "\n" if listed else pick(rng, (" ", "\n"))
    body = intro + gap + seq + ("\n" if listed else pick(rng, (" ", "\n"))) + question
    return conversation(
        rng,
        ask(rng, body),
        answer=f"Following the moves: end facing {_DIRS[facing]}, position {result}.",
        followups=(
            "and if every left were a right?",
            "now reverse the whole route",
            "What if it started facing the other way?",
        ),
    )


# --- counting under conditions ---------------------------------------------------------------------------

_WORDS = (
    "strawberry", "bookkeeper", "mississippi", "committee", "possession", "balloon", "assessment",
    "parallel", "occurrence", "embarrassment", "necessary", "referee", "banana", "coffee", "address",
    "millennium", "accommodation", "tattoo", "giraffe", "successful", "vacuum", "barrel", "letter",
)  # fmt: skip

_ATTRS = {
    "colour": ("red", "green", "yellow", "blue"),
    "size": ("small", "large"),
    "shape": ("round", "square", "triangular"),
}
_KINDS = (
    ("apples", "bananas", "oranges", "grapes"),
    ("carrots", "potatoes", "onions"),
)


def _letters(rng: random.Random) -> tuple[str, str]:
    k = rng.randint(1, 3)
    words = sample(rng, _WORDS, k)
    phrase = " ".join(words)
    letters = sorted({c for c in phrase if c.isalpha()})
    letter = pick(rng, [c for c in letters if phrase.count(c) >= 2] or letters)
    count = phrase.count(letter)
    if rng.random() < 0.5:
        q = pick(
            rng,
            (
                f"How many times does the letter '{letter}' appear in \"{phrase}\"?",
                f"Count the {letter}'s in: {phrase}",
                f"how many {letter}'s are there in the words {', '.join(words)} combined?",
            ),
        )
        return q, f"There are {count}."
    vowels = sum(c in "aeiou" for c in phrase)
    q = f'In "{phrase}", how many letters are vowels, and which consonant occurs most often?'
    return q, f"{vowels} vowels."


def _inventory(rng: random.Random) -> tuple[str, str]:
    n = rng.randint(6, 11)
    rows = []
    for _ in range(n):
        rows.append({a: pick(rng, vals) for a, vals in _ATTRS.items()})
    noun = pick(rng, ("buttons", "tiles", "beads", "stickers", "blocks", "badges"))
    descr = [f"a {r['size']} {r['colour']} {r['shape']} one" for r in rows]
    a1, a2 = sample(rng, list(_ATTRS), 2)
    v1, v2 = pick(rng, _ATTRS[a1]), pick(rng, _ATTRS[a2])
    neg = rng.random() < 0.4
    count = sum(1 for r in rows if r[a1] == v1 and ((r[a2] != v2) if neg else (r[a2] == v2)))
    cond = f"{v1} but not {v2}" if neg else f"both {v1} and {v2}"
    listing = "; ".join(descr) if rng.random() < 0.5 else "\n" + "\n".join(f"- {d}" for d in descr)
    q = f"A box holds {n} {noun}: {listing}.\nHow many of them are {cond}?"
    return q, f"{count} of them."


def _fruit(rng: random.Random) -> tuple[str, str]:
    fruit, veg = _KINDS
    bag = []
    n_fruit = 0
    for _ in range(rng.randint(4, 8)):
        k = rng.randint(1, 4)
        if rng.random() < 0.6:
            kind = pick(rng, fruit)
            n_fruit += k
        else:
            kind = pick(rng, veg)
        bag.append(
            f"{number_word(k)} {kind if k > 1 else kind.rstrip('s').replace('potatoe', 'potato').replace('tomatoe', 'tomato')}"
        )
    owner = pick(rng, NAMES)
    q = (
        f"{owner} has "
        + ", ".join(bag[:-1])
        + " and "
        + bag[-1]
        + ". How many pieces of fruit does "
        + owner
        + " have?"
    )
    if rng.random() < 0.4:
        q += " (Count each piece separately; a vegetable is not fruit.)"
    return q, f"{n_fruit}."


def _count_range(rng: random.Random) -> tuple[str, str]:
    lo, hi = rng.randint(1, 60), rng.randint(100, 400)
    a, b = sample(rng, (2, 3, 4, 5, 6, 7, 9), 2)
    count = sum(1 for v in range(lo, hi + 1) if v % a == 0 and v % b != 0)
    q = f"How many whole numbers from {maybe_words(rng, lo)} to {maybe_words(rng, hi)} inclusive are multiples of {number_word(a)} but not of {number_word(b)}?"
    return q, f"{count}."


# Each kind with the terse follow-ups that make sense after it.
_COUNT_KINDS = (
    (
        _letters,
        ("and the other letters?", "Are you sure? Count again, one by one.", "now without the first word"),
    ),
    (
        _inventory,
        (
            "and how many are not?",
            "Are you sure? Count again, one by one.",
            "now the same for the other colour",
        ),
    ),
    (
        _fruit,
        (
            "and how many vegetables?",
            "Are you sure? Count again, one by one.",
            "what if she eats two of the fruit?",
        ),
    ),
    (_count_range, ("and multiples of both?", "now up to a thousand", "Are you sure? Check with a formula.")),
)


def _counting(rng: random.Random) -> Messages:
    kind, followups = pick(rng, _COUNT_KINDS)
    q, a = kind(rng)
    return conversation(
        rng, ask(rng, q), answer="Counting carefully, item by item: " + a, followups=followups
    )


SOURCES: tuple[Source, ...] = (
    Source("gen:swaps", "hard", "reasoning", LICENCE, _swaps),
    Source("gen:navigation", "hard", "reasoning", LICENCE, _navigation),
    Source("gen:counting", "hard", "reasoning", LICENCE, _counting),
)
