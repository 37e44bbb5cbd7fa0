# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard requests over everyday material people paste: a till receipt, a league table, a group chat,
a training log, a recipe, a bank statement; the question needs several steps over it (add up and
compare, what a team needs to overtake another, who can still make it, scaling with a shortage).

A second author's way of writing the kind of request gen:reason-over-text (hard_pasted.py) holds:
another set of materials, laid out as people copy them (CSV lines, bullets, "[10:02] Ana: ..." chat
logs, aligned columns) and asked about in chat's own words. With one such source only, that source
held out reached the autoregressive backend 64 % of the time: a short question over pasted material
otherwise looks like "summarise this".
"""

from __future__ import annotations

import random

from gateway_training.generators.hard_common import (
    LICENCE,
    NAMES,
    Messages,
    conversation,
    pick,
    sample,
)
from gateway_training.sources import Source

__all__ = ["SOURCES"]


def _receipt(rng: random.Random) -> tuple[str, str]:
    items = sample(
        rng,
        (
            "milk",
            "bread",
            "eggs x12",
            "apples 1kg",
            "coffee beans",
            "pasta",
            "tomatoes",
            "cheddar",
            "olive oil",
            "bananas",
            "rice 2kg",
            "yoghurt x4",
        ),
        rng.randint(5, 8),
    )
    prices = [round(rng.uniform(0.8, 9.5), 2) for _ in items]
    lines = [f"{name.upper():<16}{price:>6.2f}" for name, price in zip(items, prices, strict=True)]
    stated = round(sum(prices) + rng.choice((0.0, 0.0, 1.2, -0.5, 2.35)), 2)
    lines.append(f"{'TOTAL':<16}{stated:>6.2f}")
    q = pick(
        rng,
        (
            "Did the shop add this up right? If not, by how much am I out?",
            "My flatmate and I split everything except the coffee, which is mine. What do we each owe?",
            f"With the {rng.choice((10, 15, 20))}% member discount on everything except dairy, what should I have paid?",
            "which three things made up most of the bill, and what share of the total were they?",
        ),
    )
    return q, "\n".join(lines)


def _league(rng: random.Random) -> tuple[str, str]:
    teams = sample(rng, ("Rovers", "United", "Athletic", "City", "Wanderers", "Albion", "Rangers", "Town"), 5)
    rows = ["Team,P,W,D,L,Pts"]
    played = rng.randint(20, 30)
    for t in teams:
        w = rng.randint(5, 16)
        d = rng.randint(2, played - w - 1)
        rows.append(f"{t},{played},{w},{d},{played - w - d},{3 * w + d}")
    a, b = teams[rng.randrange(1, 5)], teams[0]
    left = 34 - played
    q = pick(
        rng,
        (
            f"With {left} games left, can {a} still finish above {b}? What's the fewest wins they need if {b} keeps drawing?",
            "Sort this by points and tell me who would be top if wins were worth 2 points instead of 3.",
            "How many points per game is each team averaging, and who is over-performing on draws?",
        ),
    )
    return q, "\n".join(rows)


def _group_chat(rng: random.Random) -> tuple[str, str]:
    people = sample(rng, NAMES, 4)
    hour = rng.randint(8, 20)
    lines = [
        f"[{hour}:02] {people[0]}: dinner Friday? I can do after 7",
        f"[{hour}:05] {people[1]}: Friday I'm only free until 8:30, Saturday any time",
        f"[{hour}:11] {people[2]}: can't Saturday, Friday from 7:30 works",
        f"[{hour}:14] {people[3]}: I'll be there at 8 at the earliest whatever day",
        f"[{hour}:20] {people[0]}: the place closes its kitchen at 9 on Fridays and 10 on Saturdays",
    ]
    rng.shuffle(lines)
    q = pick(
        rng,
        (
            "From this chat, is there a time everyone can be at dinner together for at least an hour? Which day and when?",
            f"If {people[3]} can't come, what's the best slot, and who has to leave first?",
            "Who's the bottleneck here, and what would change if the kitchen stayed open an hour later?",
        ),
    )
    return q, "\n".join(sorted(lines))


def _training_log(rng: random.Random) -> tuple[str, str]:
    days = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    lines = []
    for d in sample(rng, days, 5):
        km = round(rng.uniform(3, 15), 1)
        minutes = int(km * rng.uniform(4.6, 6.8))
        lines.append(f"- {d}: {km} km in {minutes} min")
    goal = rng.choice((40, 45, 50))
    q = pick(
        rng,
        (
            "What was my fastest pace this week, and on which day? Give it in minutes per km.",
            f"How far do I still have to run on the remaining days to reach {goal} km, and at my average pace how long will that take?",
            "Rank my runs by pace, slowest first, and tell me whether I got faster over the week.",
        ),
    )
    return q, "\n".join(lines)


def _recipe(rng: random.Random) -> tuple[str, str]:
    serves = rng.choice((4, 6))
    eggs = rng.randint(2, 4)
    flour = rng.choice((200, 250, 300))
    lines = [
        f"Serves {serves}",
        f"- {flour} g flour",
        f"- {eggs} eggs",
        f"- {rng.choice((300, 400, 500))} ml milk",
        f"- {rng.choice((30, 50, 60))} g butter",
        "- a pinch of salt",
    ]
    guests = rng.randint(7, 15)
    have = rng.randint(eggs, eggs * 2)
    q = pick(
        rng,
        (
            f"I'm cooking for {guests} and only have {have} eggs. How many people can I actually feed, and how much of everything else do I need for that?",
            f"Scale this to {guests} people, rounding eggs up. How much flour is that in cups if a cup is 125 g?",
            f"I have 1 kg of flour and {have} eggs. How many full batches can I make, and what runs out first?",
        ),
    )
    return q, "\n".join(lines)


def _statement(rng: random.Random) -> tuple[str, str]:
    payees = ("SUPERMARKET", "RENT", "GYM", "STREAMING", "COFFEE SHOP", "TRAIN TICKET", "PHARMACY", "SALARY")
    lines = ["Date | Description | Amount"]
    balance = rng.randint(300, 1500)
    for day in sorted(rng.sample(range(1, 29), 7)):
        payee = pick(rng, payees)
        amount = rng.randint(1800, 2600) if payee == "SALARY" else -rng.randint(3, 120)
        lines.append(f"{day:02d}/03 | {payee} | {amount:+d}")
    q = pick(
        rng,
        (
            f"I started the month with {balance}. What was my lowest balance, and on which day?",
            "How much did I spend on food and drink altogether, and what share of my outgoings is that?",
            "If the gym and streaming go up 10% next month and everything else stays the same, will I still save anything?",
        ),
    )
    return q, "\n".join(lines)


_KINDS = (_receipt, _league, _group_chat, _training_log, _recipe, _statement)


def _draw(rng: random.Random) -> Messages:
    question, material = pick(rng, _KINDS)(rng)
    frame = rng.random()
    if frame < 0.45:
        prompt = f"{question}\n\n{material}"
    elif frame < 0.85:
        prompt = f"{material}\n\n{question}"
    else:
        prompt = f"{pick(rng, ('Pasting this from my phone:', 'Here it is:', 'ok so this is what I have:'))}\n{material}\n\n{question}"
    return conversation(
        rng,
        prompt,
        answer="Going through it line by line: ...",
        followups=(
            "and if I got one number wrong?",
            "show me the working",
            "now do the same for last month",
            "are you sure?",
        ),
    )


SOURCES: tuple[Source, ...] = (Source("gen:pasted-everyday", "hard", "reasoning", LICENCE, _draw),)
