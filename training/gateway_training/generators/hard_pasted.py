"""Hard requests shaped like the easy transform ones: a short instruction, then pasted material.

People paste a timetable, a price list, a rota, a set of rules or a long email, then ask for something
that takes several steps of reasoning over it. Without such a source the only turns in training that
pair an instruction with a long payload are the summarise / rewrite / translate requests, and the
scorer would learn "instruction + payload = easy": a puzzle pasted after "Can you solve this?" would go
to the diffusion backend. The same ``text_of`` texts that the transform sources summarise are used
here with questions that need arithmetic, constraints or deduction, so that the instruction, not the
payload, tells the two apart. Payloads are English only: the non-English payloads stay with the easy
sources, so a held-out language is not learnt as "hard" from here.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_transform import text_of
from gateway_training.generators.hard_common import LICENCE, NAMES, Messages, conversation, pick
from gateway_training.sources import Source

__all__ = ["SOURCES"]

_LEADS = (
    "{q}",
    "Quick question about the text below. {q}",
    "Can you help me with this? {q}",
    "{q} Explain your reasoning.",
    "{q} Show your working step by step.",
    "{q} Please double-check before answering.",
    "Using only the information below: {q}",
    "Based on this, {q_lower}",
)

_ON_TEXT = (
    "If every date in this {w} slipped by {n} days, which of them would fall on a weekend, assuming "
    "the first one is a {day}?",
    "List everything in this {w} that depends on something else happening first, and give an order "
    "in which all of it can be done.",
    "Does anything in this {w} contradict anything else in it? Check each figure against the others.",
    "Work out the total of every amount mentioned in this {w}, then say what it would be after a {p}% "
    "increase.",
    "Assume each person named in this {w} can attend only one of two follow-up meetings and no two "
    "people from the same team can be in the same one. Is there a valid split? Find all of them.",
    "Which of the claims in this {w} can be deduced from the others, and which have to be taken on trust?",
    "If the deadlines in this {w} are all moved forward by a week, which tasks now overlap and who is "
    "double-booked?",
    "Estimate how many hours of work this {w} implies in total, stating each assumption, and whether "
    "it fits in {n} working days for two people.",
)

_WORDS = {"news": "article", "email": "email", "review": "review", "notes": "set of notes", "blog": "post"}


def _on_text(rng: random.Random) -> tuple[str, str]:
    kind, text = text_of(rng)
    q = pick(rng, _ON_TEXT).format(
        w=_WORDS[kind],
        n=rng.randint(2, 12),
        p=rng.randint(5, 40),
        day=pick(rng, ("Monday", "Thursday", "Friday")),
    )
    return q, text


def _timetable(rng: random.Random) -> tuple[str, str]:
    stops = rng.sample(("Ashby", "Brook", "Castle", "Dunmore", "Elm Park", "Fairview", "Glen", "Hale"), 4)
    rows = [" | ".join(["Train", *stops])]
    start = rng.randint(6, 9) * 60 + rng.choice((0, 5, 12, 20, 35, 48))
    for k in range(rng.randint(4, 7)):
        t = start + k * rng.choice((20, 30, 40))
        cells = []
        for _ in stops:
            cells.append(f"{t // 60:02d}:{t % 60:02d}")
            t += rng.randint(8, 25)
        rows.append(" | ".join([f"R{100 + k}", *cells]))
    table = "\n".join(rows)
    a, b = stops[0], stops[-1]
    q = pick(
        rng,
        (
            f"I reach {a} at {start // 60 + 1}:{rng.randint(0, 5)}5 and need ten minutes to change. What is "
            f"the earliest I can be in {b}, and which train is it?",
            f"If every train after the second is delayed by {rng.randint(7, 19)} minutes, which connection "
            f"at {stops[1]} to a bus leaving on the hour still works?",
            f"Which train spends the longest between {a} and {b}, and by how much?",
            f"I have to be in {b} by {start // 60 + 2}:00 and want to leave {a} as late as possible. "
            f"Which train do I take and how much slack do I have?",
        ),
    )
    return q, table


def _prices(rng: random.Random) -> tuple[str, str]:
    items = rng.sample(
        ("tent", "stove", "sleeping bag", "lantern", "backpack", "water filter", "map", "rope", "towel"),
        6,
    )
    cur = pick(rng, ("$", "€", "£"))
    lines = [f"- {it}: {cur}{rng.randint(5, 180)} ({rng.randint(1, 9) * 100} g)" for it in items]
    budget = rng.randint(150, 400)
    q = pick(
        rng,
        (
            f"I have {cur}{budget} and can carry at most 2 kg. Which combination of these gives me the most "
            "items? Is there more than one?",
            f"Which two items together cost closest to {cur}{budget // 2} without going over?",
            f"If I buy three of them and get the cheapest free, which three minimise what I pay while "
            f"weighing under {rng.randint(8, 15)}00 g?",
        ),
    )
    return q, "\n".join(lines)


def _rota(rng: random.Random) -> tuple[str, str]:
    people = rng.sample(NAMES, 5)
    days = ("Mon", "Tue", "Wed", "Thu", "Fri")
    lines = []
    for p in people:
        free = sorted(rng.sample(range(5), rng.randint(2, 4)))
        lines.append(f"{p}: available " + ", ".join(days[i] for i in free))
    rules = pick(
        rng,
        (
            f"{people[0]} and {people[1]} cannot work the same day.",
            f"Nobody works two days in a row, and {people[2]} must work Friday.",
            f"Each day needs two people and {people[3]} works at most twice.",
        ),
    )
    q = pick(
        rng,
        (
            "Can you make a rota from this that covers every day? If not, which day can't be, and why?",
            "How many different valid rotas are there? Explain how you counted.",
            "Who is indispensable here, i.e. without whom no valid rota exists?",
        ),
    )
    return q, "\n".join(lines) + "\n\nRules: " + rules


def _rules(rng: random.Random) -> tuple[str, str]:
    a, b, c, d = rng.sample(NAMES, 4)
    clauses = [
        f"1. A player may only move after {a} has moved.",
        f"2. If {b} passes, {c} must play a card higher than the last one played.",
        "3. A card of the same suit as the previous card ends the round.",
        f"4. {d} may swap hands once, but only if no round has ended.",
        "5. Whoever ends a round scores the sum of the cards played in it.",
    ]
    rng.shuffle(clauses)
    play = f"{a} plays 7 of hearts, {b} passes, {c} plays 5 of spades, {d} swaps hands and plays 9 of hearts."
    q = pick(
        rng,
        (
            "Was every move in the game below legal under these rules? Name the first illegal one, if any.",
            "Under these house rules, who scores in the game below, and how many points?",
            "Find a way for the last player to end the round legally, or show that none exists.",
        ),
    )
    return q, "House rules:\n" + "\n".join(clauses) + "\n\nGame: " + play


_KINDS = (_on_text, _on_text, _timetable, _prices, _rota, _rules)


def _draw(rng: random.Random) -> Messages:
    question, payload = pick(rng, _KINDS)(rng)
    first = rng.random() < 0.65  # the instruction before the material, or after it
    leads = _LEADS if first else _LEADS[:6]  # "below" and "based on this" read wrong after it
    lead = pick(rng, leads).format(q=question, q_lower=question[0].lower() + question[1:])
    fences = (('"""\n', '\n"""'), ("---\n", "\n---"), ("", ""), ("Here it is:\n", ""))
    fence = pick(rng, fences if first else fences[:3])
    body = f"{fence[0]}{payload}{fence[1]}"
    text = f"{lead}\n\n{body}" if first else f"{body}\n\n{lead}"
    return conversation(rng, text, answer=pick(rng, _ANSWERS), followups=_FOLLOWUPS)


_ANSWERS = (
    "Let me go through it step by step. First, the constraints: ...",
    "Short answer: it works, but only one way. Here is why: ...",
    "Not quite: the second item conflicts with the third. Walking through it: ...",
)
_FOLLOWUPS = (
    "And if one of them drops out?",
    "Now check that against the rules again.",
    "What if everything moves a day later?",
    "Are you sure? Recount.",
    "ok and with half the budget",
)


SOURCES = (Source("gen:reason-over-text", "hard", "reasoning", LICENCE, _draw),)
