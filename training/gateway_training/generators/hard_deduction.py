# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard deduction puzzles: orderings from comparisons, seating from clues, knights and knaves, syllogisms.

Every puzzle is built from a hidden solution and checked by brute force to have exactly one answer, so
the prompt really needs several inference steps (no clue states the answer on its own).

Over 400 lines on purpose: four puzzle kinds, each one's vocabulary beside its builder and checker.
"""

from __future__ import annotations

import itertools
import random

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

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")

# (more, less, most, least, base) for "A is <more> than B" / "B is not as <base> as A".
_SCALES = (
    ("taller", "shorter", "tallest", "shortest", "tall"),
    ("older", "younger", "oldest", "youngest", "old"),
    ("heavier", "lighter", "heaviest", "lightest", "heavy"),
    ("faster", "slower", "fastest", "slowest", "fast"),
    ("richer", "poorer", "richest", "poorest", "rich"),
    ("more expensive", "cheaper", "most expensive", "cheapest", "expensive"),
)
# Things to compare, with the scales that make sense for them.
_THINGS = (
    (("the oak", "the birch", "the pine", "the maple", "the willow", "the cedar"), ("taller", "older")),
    (
        ("the red car", "the blue car", "the grey car", "the white car", "the green car", "the black car"),
        ("faster", "heavier", "more expensive", "older"),
    ),
    (
        ("the tortoise", "the dog", "the cat", "the rabbit", "the horse", "the goat"),
        ("heavier", "faster", "older", "taller"),
    ),
)
_PEOPLE_SCALES = ("taller", "older", "heavier", "faster", "richer")


def _ordering(rng: random.Random) -> Messages:
    n = rng.randint(4, 6)
    more, less, most, least, base = pick(rng, _SCALES)
    fitting = [things for things, scales in _THINGS if more in scales]
    if more in _PEOPLE_SCALES and (not fitting or rng.random() < 0.6):
        people = sample(rng, NAMES, n)
    else:
        people = sample(rng, pick(rng, fitting), n)
    order = people[:]  # order[0] is the "most"
    rng.shuffle(order)
    # A chain of adjacent comparisons (needed) plus a redundant one, each stated in either direction.
    pairs = [(order[i], order[i + 1]) for i in range(n - 1)]
    i, j = sorted(sample(rng, range(n), 2))
    if j - i > 1:
        pairs.append((order[i], order[j]))
    rng.shuffle(pairs)
    clues: list[str] = []
    for a, b in pairs:
        form = rng.random()
        if form < 0.45:
            clues.append(f"{a} is {more} than {b}.")
        elif form < 0.8:
            clues.append(f"{b} is {less} than {a}.")
        else:
            clues.append(f"{b} is not as {base} as {a}.")
    clues = [c[0].upper() + c[1:] for c in clues]
    k = rng.randrange(1, n - 1)
    q = rng.random()
    if q < 0.3:
        question, answer = f"Who is the {_ORDINALS[k]} {most}?", order[k]
    elif q < 0.55:
        question, answer = f"Who is the {least}?", order[-1]
    elif q < 0.8:
        a, b = sample(rng, order, 2)
        question = f"Is {a} {more} than {b}?"
        answer = "Yes" if order.index(a) < order.index(b) else "No"
    else:
        question, answer = f"List them from {most} to {least}.", ", ".join(order)
    intro = pick(rng, ("", f"There are {number_word(n)} of them. ", "Consider the following facts. ", ""))
    sep = pick(rng, (" ", "\n"))
    body = intro + sep.join(clues) + sep + question
    if rng.random() < 0.15:  # terse, as typed in a hurry: short hard prompts exist too
        terse = [c.rstrip(".").replace(" is ", " ", 1) for c in clues]
        terse = terse[:1] + [c[0].lower() + c[1:] if c.startswith("The ") else c for c in terse[1:]]
        body = "; ".join(terse) + ". " + question.replace("Who is the ", "who's ")
    prompt = ask(rng, body)
    return conversation(
        rng,
        prompt,
        answer=f"Chaining the comparisons gives the order {', '.join(order)}. So: {answer}.",
        followups=(
            f"And who is the {_ORDINALS[min(k + 1, n - 1)]} {most}?",
            f"What if {order[-1]} were actually {more} than {order[0]}, does the order change?",
            "how many comparisons did you actually need?",
            "Which of the clues was redundant?",
        ),
    )


# --- seating: positions 0..n-1 in a line; clue kinds are checked on every permutation -----------------

_LINES = (
    ("seats in a row at the cinema", "seat", "left", "right"),
    ("houses along one side of a street", "house", "west", "east"),
    ("parking spaces in a row", "space", "left", "right"),
    ("lanes of a swimming pool", "lane", "left", "right"),
    ("floors of a small office building", "floor", "below", "above"),
    ("desks in a row by the window", "desk", "left", "right"),
)

# A clue is its text plus (kind, names); _holds tests it on a candidate order.
Clue = tuple[str, tuple[str, ...]]


def _holds(fact: tuple[str, ...], q: tuple[str, ...]) -> bool:
    kind, *who = fact
    at = [q.index(w) for w in who]
    n = len(q)
    match kind:
        case "imm":
            return at[0] + 1 == at[1]
        case "before":
            return at[0] < at[1]
        case "apart":
            return abs(at[0] - at[1]) > 1
        case "end":
            return at[0] in (0, n - 1)
        case "inner":
            return at[0] not in (0, n - 1)
        case "between":
            return abs(at[1] - at[2]) == 2 and at[0] * 2 == at[1] + at[2]
    raise ValueError(kind)


def _seating_clues(perm: tuple[str, ...], words: tuple[str, str, str, str]) -> list[Clue]:
    lo = words[2]
    n = len(perm)
    pos = {p: i for i, p in enumerate(perm)}
    out: list[Clue] = []
    for a, b in itertools.permutations(perm, 2):
        if pos[a] + 1 == pos[b]:
            if lo == "below":
                text = f"{a} works on the floor directly below {b}."
            else:
                text = f"{a} is immediately to the {lo} of {b}."
            out.append((text, ("imm", a, b)))
        if pos[a] < pos[b] and pos[b] - pos[a] > 1:
            text = f"{a} is somewhere {'below' if lo == 'below' else 'to the ' + lo + ' of'} {b}."
            out.append((text, ("before", a, b)))
        if a < b and abs(pos[a] - pos[b]) > 1:
            out.append((f"{a} and {b} are not next to each other.", ("apart", a, b)))
    for p in perm:
        if pos[p] in (0, n - 1):
            out.append((f"{p} is at one of the ends.", ("end", p)))
        else:
            out.append((f"{p} is not at either end.", ("inner", p)))
    for a, b, c in itertools.permutations(perm, 3):
        if pos[b] == pos[a] + 1 == pos[c] - 1 and a < c:
            out.append((f"{b} is between {a} and {c}.", ("between", b, a, c)))
    return out


def _seating(rng: random.Random) -> Messages:
    n = rng.randint(4, 5)
    words = pick(rng, _LINES)
    people = sample(rng, NAMES, n)
    perm = tuple(rng.sample(people, n))
    candidates = _seating_clues(perm, words)
    rng.shuffle(candidates)
    alive = list(itertools.permutations(people))
    chosen: list[str] = []
    for text, fact in candidates:
        kept = [q for q in alive if _holds(fact, q)]
        if len(kept) < len(alive):
            chosen.append(text)
            alive = kept
        if len(alive) == 1:
            break
    if len(alive) > 1:  # pin the first position to finish; rare with these clue kinds
        chosen.append(f"{perm[0]} is in {words[1]} number one.")
    rng.shuffle(chosen)
    setting, noun, lo, _ = words
    k = rng.randrange(n)
    q = rng.random()
    if q < 0.5:
        question = f"Who is in {noun} {k + 1}, counting from the {lo if lo != 'below' else 'ground floor'}?"
        if noun == "floor":
            question = f"Who works on the {_ORDINALS[k]} floor (the ground floor counts as the first)?"
        result = perm[k]
    elif q < 0.8:
        question = pick(rng, ("What is the full order?", "Give the complete arrangement.", "Who is where?"))
        result = ", ".join(perm)
    else:
        question = f"Who is next to {perm[k]}?"
        result = " and ".join(perm[i] for i in (k - 1, k + 1) if 0 <= i < n)
    names = ", ".join(people[:-1]) + " and " + people[-1]
    intro = pick(
        rng,
        (
            f"{names} occupy {number_word(n)} {setting}, one each.",
            f"{number_word(n).capitalize()} people ({names}) are assigned {number_word(n)} {setting}.",
            f"We have {number_word(n)} {setting} numbered from the {lo if lo != 'below' else 'bottom'} and {number_word(n)} people: {names}.",
        ),
    )
    body = (
        intro + "\n" + "\n".join(("- " if rng.random() < 0.5 else "") + c for c in chosen) + "\n" + question
    )
    return conversation(
        rng,
        ask(rng, body),
        answer=f"The only arrangement consistent with all clues is {', '.join(perm)}, so the answer is {result}.",
        followups=(
            "Is that the only possible arrangement? Prove it.",
            f"Now drop the clue about {pick(rng, people)}. How many arrangements work then?",
            "and if we add a sixth person who must sit at an end?",
        ),
    )


# --- knights and knaves ----------------------------------------------------------------------------------

_ISLANDS = (
    ("knights", "knaves", "always tell the truth", "always lie", "on an island"),
    ("truth-tellers", "liars", "never lie", "never tell the truth", "in a village"),
    (
        "guards of the honest door",
        "guards of the lying door",
        "speak only truths",
        "speak only falsehoods",
        "in a castle",
    ),
    (
        "robots of model T",
        "robots of model F",
        "output only true statements",
        "output only false statements",
        "in a factory",
    ),
)

# A statement is its text plus (kind, speaker, other); _true evaluates it in a world (name -> honest?).
Statement = tuple[str, tuple[str, str, str]]


def _true(fact: tuple[str, str, str], w: dict[str, bool]) -> bool:
    kind, s, o = fact
    liars = sum(not v for v in w.values())
    match kind:
        case "is_bad":
            return not w[o]
        case "is_good":
            return w[o]
        case "same":
            return w[o] == w[s]
        case "differ":
            return w[o] != w[s]
        case "implies":
            return (not w[s]) or w[o]
        case "not_both":
            return not (w[s] and w[o])
        case "one_good":
            return len(w) - liars == 1
        case "some_bad":
            return liars >= 1
        case "all_bad":
            return liars == len(w)
        case "two_bad":
            return liars == 2
    raise ValueError(kind)


def _statements(speaker: str, people: list[str], kinds: tuple[str, str, str, str, str]) -> list[Statement]:
    good, bad = kinds[0], kinds[1]
    out: list[Statement] = []
    for o in (p for p in people if p != speaker):
        out.append((f"{o} is one of the {bad}.", ("is_bad", speaker, o)))
        out.append((f"{o} is one of the {good}.", ("is_good", speaker, o)))
        out.append((f"{o} and I are the same kind.", ("same", speaker, o)))
        out.append((f"{o} and I are different kinds.", ("differ", speaker, o)))
        out.append((f"If I am one of the {good}, then so is {o}.", ("implies", speaker, o)))
        out.append((f"Either I or {o} is one of the {bad}, or both are.", ("not_both", speaker, o)))
    out.append((f"Exactly one of us is one of the {good}.", ("one_good", speaker, speaker)))
    out.append((f"At least one of us is one of the {bad}.", ("some_bad", speaker, speaker)))
    out.append((f"All of us are {bad}.", ("all_bad", speaker, speaker)))
    out.append((f"Exactly two of us are {bad}.", ("two_bad", speaker, speaker)))
    return out


def _knights(rng: random.Random) -> Messages:
    kinds = pick(rng, _ISLANDS)
    good, bad, says_true, says_false, place = kinds
    for _ in range(200):
        n = rng.choice((2, 3, 3))
        people = sample(rng, NAMES, n)
        speakers = people if n == 2 or rng.random() < 0.5 else people[: n - 1]
        said = [(s, pick(rng, _statements(s, people, kinds))) for s in speakers]
        worlds = []
        for values in itertools.product((True, False), repeat=n):
            w = dict(zip(people, values, strict=True))
            if all(_true(fact, w) == w[s] for s, (_, fact) in said):
                worlds.append(w)
        if len(worlds) == 1:
            break
    else:  # about 40% of random statement sets have one solution: 200 misses in a row do not happen
        raise RuntimeError("no knights-and-knaves puzzle with a unique solution in 200 tries")
    world = worlds[0]
    lines = [
        pick(rng, (f'{s} says: "{text}"', f"{s} tells you, '{text}'", f'{s}: "{text}"'))
        for s, (text, _) in said
    ]
    names = ", ".join(people)
    body = pick(
        rng,
        (
            f"{place.capitalize()} live {good}, who {says_true}, and {bad}, who {says_false}. You meet {names}.\n",
            f"Everyone {place} is either one of the {good} (they {says_true}) or one of the {bad} (they {says_false}). You meet {names}.\n",
            f"Logic puzzle. {place.capitalize()}, {good} {says_true} and {bad} {says_false}. {names} are there.\n",
        ),
    )
    body += (
        "\n".join(lines)
        + "\n"
        + pick(
            rng,
            (
                "What is each of them?",
                f"Which of them are {good}?",
                f"Is {people[-1]} one of the {good} or one of the {bad}?",
                "Determine everyone's type.",
            ),
        )
    )
    answer = "; ".join(f"{p} is one of the {good if v else bad}" for p, v in world.items())
    return conversation(
        rng,
        ask(rng, body),
        answer=f"Testing each combination, only one is consistent: {answer}.",
        followups=(
            f"What if {people[0]} had said the opposite?",
            "Can you show why no other assignment works?",
            "now make one up for 4 people with a unique answer",
        ),
    )


# --- syllogisms and propositional validity ---------------------------------------------------------------

_TERMS = (
    "cats", "mammals", "pets", "dogs", "birds", "penguins", "swimmers", "musicians", "teachers", "poets",
    "painters", "engineers", "cyclists", "vegetarians", "gardeners", "philosophers", "blurbs", "zorps",
    "wuggles", "florps", "students", "athletes", "chess players", "violinists", "doctors", "runners",
)  # fmt: skip

# (premise 1, premise 2, conclusion, valid?) over terms A, B, C.
_FORMS = (
    ("All {A} are {B}.", "All {B} are {C}.", "all {A} are {C}", True),
    ("No {B} are {C}.", "All {A} are {B}.", "no {A} are {C}", True),
    ("All {B} are {C}.", "Some {A} are {B}.", "some {A} are {C}", True),
    ("No {B} are {C}.", "Some {A} are {B}.", "some {A} are not {C}", True),
    ("All {A} are {B}.", "All {C} are {B}.", "all {A} are {C}", False),
    ("Some {A} are {B}.", "Some {B} are {C}.", "some {A} are {C}", False),
    ("All {A} are {B}.", "No {A} are {C}.", "no {B} are {C}", False),
    ("Some {A} are not {B}.", "All {C} are {B}.", "some {A} are not {C}", True),
    ("No {A} are {B}.", "No {B} are {C}.", "no {A} are {C}", False),
    ("All {B} are {A}.", "All {B} are {C}.", "some {A} are {C}", True),  # valid only if some B exist
    ("Some {A} are not {B}.", "Some {B} are not {C}.", "some {A} are not {C}", False),
)

_PROPS = (
    ("If {p}, then {q}.", "{q_cap}.", "{p}", False),
    ("If {p}, then {q}.", "It is not the case that {q}.", "it is not the case that {p}", True),
    ("If {p}, then {q}.", "It is not the case that {p}.", "it is not the case that {q}", False),
    ("Either {p} or {q}.", "It is not the case that {p}.", "{q}", True),
    ("{p_cap} only if {q}.", "{p_cap}.", "{q}", True),
    ("{p_cap} only if {q}.", "{q_cap}.", "{p}", False),
    ("Unless {p}, {q}.", "It is not the case that {q}.", "{p}", True),
)
_CLAUSES = (
    "the alarm rings", "the shop is open", "it snows", "Mara takes the train", "the server restarts",
    "the bridge is closed", "the cake is in the oven", "the meeting is cancelled", "the river floods",
    "the lamp is on", "the key is in the drawer", "the team wins the final", "the printer jams",
)  # fmt: skip


def _syllogism(rng: random.Random) -> Messages:
    if rng.random() < 0.6:
        a, b, c = sample(rng, _TERMS, 3)
        p1, p2, concl, valid = pick(rng, _FORMS)
        prem = [p1.format(A=a, B=b, C=c), p2.format(A=a, B=b, C=c)]
        conclusion = concl.format(A=a, B=b, C=c)
    else:
        p, q = sample(rng, _CLAUSES, 2)
        p1, p2, concl, valid = pick(rng, _PROPS)
        fields = {"p": p, "q": q, "p_cap": p[0].upper() + p[1:], "q_cap": q[0].upper() + q[1:]}
        prem = [p1.format(**fields), p2.format(**fields)]
        conclusion = concl.format(**fields)
    rng.shuffle(prem)
    body = pick(
        rng,
        (
            "Premises: {p}\nConclusion: {c}.\nIs the argument valid?",
            "{p} Does it follow that {c}?",
            "Suppose {p} Can we conclude that {c}? Answer yes or no and justify.",
            "Is this a valid deduction? {p} Therefore, {c}.",
            "Assume only the following is true. {p} Must it be true that {c}?",
            "Logic check: {p} => {c}. Valid or invalid, and why?",
        ),
    ).format(p=" ".join(prem), c=conclusion)
    verdict = "valid" if valid else "not valid"
    return conversation(
        rng,
        ask(rng, body, lead=rng.random() < 0.5),
        answer=f"The argument is {verdict}: {'the conclusion is forced by the premises' if valid else 'a counterexample satisfies both premises but not the conclusion'}.",
        followups=(
            "Give a counterexample." if not valid else "What if the second premise were dropped?",
            "and if we swap the two premises' terms?",
            "Draw it as a Venn diagram in words.",
            "Prove the converse.",
        ),
    )


SOURCES: tuple[Source, ...] = (
    Source("gen:ordering", "hard", "reasoning", LICENCE, _ordering),
    Source("gen:seating", "hard", "reasoning", LICENCE, _seating),
    Source("gen:knights", "hard", "reasoning", LICENCE, _knights),
    Source("gen:syllogism", "hard", "reasoning", LICENCE, _syllogism),
)
