# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard everyday quantitative prompts in plain words: word problems (rates, ages, mixtures, work, sharing,
two-prices), multi-step unit conversions, and lookups or aggregates over a small table given in the prompt.
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


def _rates(rng: random.Random) -> tuple[str, str]:
    a, b = sample(rng, ("Hollin", "Marsby", "Tarrow", "Quayle", "Denby", "Ostrava", "Lindum", "Brenna"), 2)
    v1, v2 = rng.randint(40, 120), rng.randint(40, 120)
    d = (v1 + v2) * rng.randint(1, 4) // rng.choice((1, 2))
    q = pick(
        rng,
        (
            f"{a} and {b} are {maybe_words(rng, d)} km apart. A car leaves {a} towards {b} at {maybe_words(rng, v1)} km/h and at the same moment a van leaves {b} towards {a} at {maybe_words(rng, v2)} km/h. How long until they meet, and how far from {a}?",
            f"Two cyclists start at opposite ends of a {d} km road and ride towards each other, one at {v1 // 4} km an hour and the other at {v2 // 4}. When do they pass each other?",
            f"A tortoise gets a head start of {maybe_words(rng, v1)} metres. It crawls at {number_word(rng.randint(1, 3))} metres a minute while a snail chasing it does {number_word(rng.randint(4, 6))} metres a minute. After how many minutes does the snail catch up, and how far has it gone?",
        ),
    )
    return (
        q,
        "The gap closes at the sum (or difference) of the two speeds; dividing the distance by it gives the time, and the time times one speed gives the place.",
    )


def _ages(rng: random.Random) -> tuple[str, str]:
    p, c = sample(rng, NAMES, 2)
    child = rng.randint(4, 16)
    k = rng.randint(2, 5)
    parent = child * k
    years = rng.randint(2, 12)
    back = rng.randint(1, child - 1)  # years ago, while the child was already born
    q = pick(
        rng,
        (
            f"{p} is {number_word(k)} times as old as {c}. In {number_word(years)} years, {p} will be {number_word(parent + years)}. How old is {c} now?",
            f"{p} is {maybe_words(rng, parent - child)} years older than {c}, and {p} is {number_word(k)} times {c}'s age. How old will {c} be when {p} is exactly twice {c}'s age?",
            f"The sum of the ages of {p} and {c} is {maybe_words(rng, parent + child)}. {number_word(back).capitalize()} years ago {p} was {maybe_words(rng, parent - back)}. How old was {c} then?",
        ),
    )
    return (
        q,
        "Writing each statement as an equation in the unknown ages and solving the pair gives the answer.",
    )


def _mixture(rng: random.Random) -> tuple[str, str]:
    a, b = rng.choice((10, 15, 20, 25)), rng.choice((40, 50, 60, 80))
    target = rng.randrange(a + 5, b, 5)
    vol = rng.choice((2, 3, 5, 10, 12))
    thing = pick(rng, ("juice concentrate", "alcohol", "salt", "sugar syrup", "antifreeze"))
    q = pick(
        rng,
        (
            f"I have one solution that is {a}% {thing} and another that is {b}% {thing}. How many litres of each do I need to make {vol} litres that is {target}% {thing}?",
            f"A {vol}-litre tank holds a {b}% {thing} mix. How much must be drained and replaced with a {a}% mix to bring it down to {target}%?",
            f"Coffee beans at {a // 5 + 8} euros a kilo are blended with beans at {b // 5 + 8} euros a kilo. How many kilos of each go into a {vol} kg bag that should cost {target // 5 + 8} euros a kilo?",
        ),
    )
    return (
        q,
        "Balancing the amount of the ingredient before and after mixing gives one equation in the unknown quantity.",
    )


def _work(rng: random.Random) -> tuple[str, str]:
    a, b = rng.randint(2, 12), rng.randint(2, 12)
    p, r = sample(rng, NAMES, 2)
    q = pick(
        rng,
        (
            f"{p} can paint the fence alone in {number_word(a)} hours and {r} can do it in {number_word(b)} hours. Working together, how long does it take?",
            f"One tap fills the bath in {maybe_words(rng, a * 5)} minutes; the plug hole empties a full bath in {maybe_words(rng, b * 5 + a * 5)} minutes. If I forget the plug, how long until the bath is full?",
            f"{p} and {r} start weeding a garden together. {p} alone would need {number_word(a)} hours, {r} alone {number_word(b)}. After an hour {r} leaves. How much longer does {p} need to finish?",
            f"Three printers could each do a print job alone in {number_word(a)}, {number_word(b)} and {number_word(a + b)} hours. All three run together; when is the job done?",
        ),
    )
    return q, "Add the rates (jobs per hour), subtracting any that work against you, and invert the total."


def _sharing(rng: random.Random) -> tuple[str, str]:
    people = sample(rng, NAMES, 3)
    total = rng.randint(6, 40) * 10
    r = [rng.randint(1, 5) for _ in people]
    q = pick(
        rng,
        (
            f"{people[0]}, {people[1]} and {people[2]} share {total} euros in the ratio {r[0]} to {r[1]} to {r[2]}, but {people[2]} then gives a quarter of hers to {people[0]}. How much does each end up with?",
            f"Three flatmates split the bill of {total} dollars: {people[0]} pays double what {people[1]} pays, and {people[2]} pays twenty more than {people[1]}. How much does each pay?",
            f"A group of friends ordered food for {maybe_words(rng, total)} pounds. {people[0]} didn't drink, and the drinks were a fifth of the bill. The drinks are shared by the other {number_word(r[0] + 2)} people and the food by everyone. What does {people[0]} owe, and what does each of the others owe?",
            f"{people[0]} has {number_word(r[0] + 3)} more stickers than {people[1]}. If {people[0]} gives {people[1]} {number_word(r[1])}, who has more, and by how many?",
        ),
    )
    return (
        q,
        "Write each share in terms of one unknown, use the total to find it, then apply the later transfer.",
    )


def _two_prices(rng: random.Random) -> tuple[str, str]:
    small = rng.randint(5, 60)
    diff = rng.randint(50, 400)
    things = pick(
        rng,
        (
            ("a notebook", "a pen"),
            ("a racket", "a can of balls"),
            ("a lamp", "a bulb"),
            ("a hat", "a scarf"),
            ("a cake", "a candle"),
        ),
    )
    total = 2 * small + diff
    q = pick(
        rng,
        (
            f"{things[0].capitalize()} and {things[1]} cost {total / 100:.2f} together. {things[0].capitalize()} costs {diff / 100:.2f} more than {things[1]}. What does {things[1]} cost?",
            f"Together {things[0]} and {things[1]} come to {total} cents, and the first is {diff} cents dearer than the second. Price of the second?",
            f"I paid {total} pence for {things[0]} and {things[1]}. The difference between their prices is {diff} pence, the first being pricier. How much was {things[1]}?",
        ),
    )
    return q, f"The cheaper one costs {small} (in hundredths of the currency), not the difference."


# Each kind with the terse follow-ups that make sense after it.
_WORD_KINDS = (
    (
        _rates,
        (
            "and if the second one left 30 minutes later?",
            "what if the second one were 20% slower?",
            "now with three of them",
        ),
    ),
    (
        _ages,
        (
            "and how old will they be when the ratio is three to two?",
            "Can you check it a different way?",
            "now with a third sibling, two years younger",
        ),
    ),
    (
        _mixture,
        (
            "and if I needed twice as much?",
            "what if the strong one were only 45%?",
            "now do it with three solutions",
        ),
    ),
    (
        _work,
        (
            "and with a third helper who is twice as slow?",
            "what if one of them starts an hour late?",
            "Can you check it a different way?",
        ),
    ),
    (
        _sharing,
        ("now do it for 5 people", "and if the ratio were reversed?", "Can you check it a different way?"),
    ),
    (
        _two_prices,
        (
            "and if the difference were twice as big?",
            "why is the quick answer wrong?",
            "now with three items",
        ),
    ),
)


def _wordproblem(rng: random.Random) -> Messages:
    kind, followups = pick(rng, _WORD_KINDS)
    q, a = kind(rng)
    return conversation(
        rng, ask(rng, q), answer="Setting up the relationships and solving: " + a, followups=followups
    )


# --- unit conversions with several steps -------------------------------------------------------------------


def _unitconv(rng: random.Random) -> Messages:
    kind = rng.randrange(7)
    if kind == 0:
        mpg = rng.randint(22, 55)
        q = f"My car does {mpg} miles per US gallon. What is that in litres per 100 km? (1 mile is 1.609 km, a US gallon is 3.785 litres.)"
        ans = f"{235.21 / mpg:.1f} L/100 km"
    elif kind == 1:
        cups = rng.choice((1.5, 2, 2.5, 3, 3.5))
        g = rng.choice((120, 125, 130))
        bag = rng.choice((1, 1.5, 2, 2.5))
        q = f"A recipe needs {cups:g} cups of flour per batch. One cup of flour weighs about {g} g and I have a {bag:g} kg bag. How many full batches can I make, and how much flour is left?"
        ans = f"{int(bag * 1000 // (cups * g))} batches"
    elif kind == 2:
        w, h = rng.randint(5, 30), rng.randint(5, 30)
        roll = rng.choice((2, 2.5, 5, 10))
        q = f"My garden is {number_word(w)} yards by {number_word(h)} yards. Fencing is sold in rolls of {roll:g} metres. How many rolls do I need to go all the way round, leaving a one-metre gap for the gate? (A yard is 0.9144 m.)"
        ans = f"{-(-(2 * (w + h) * 0.9144 - 1) // roll):.0f} rolls"
    elif kind == 3:
        knots = rng.randint(8, 35)
        nm = rng.randint(20, 300)
        q = f"A boat cruises at {knots} knots. The harbour is {nm} km away. How long does the trip take in hours and minutes? One knot is one nautical mile per hour, and a nautical mile is 1852 m."
        ans = f"{nm / (knots * 1.852):.2f} h"
    elif kind == 4:
        ft = (rng.randint(10, 40), rng.randint(6, 20), rng.randint(3, 8))
        flow = rng.randint(10, 60)
        q = f"A pool is {ft[0]} ft long, {ft[1]} ft wide and {ft[2]} ft deep. The hose delivers {flow} litres per minute. How many hours to fill it? (1 cubic foot is about 28.3 litres.)"
        ans = f"{ft[0] * ft[1] * ft[2] * 28.3 / flow / 60:.1f} hours"
    elif kind == 5:
        pace = (rng.randint(4, 7), rng.choice((0, 15, 30, 45)))
        dist = rng.choice(
            ("a half marathon (21.1 km)", "a 10-mile race", "a marathon (42.2 km)", "a 5 km parkrun")
        )
        q = f"If I run at a pace of {pace[0]}:{pace[1]:02d} per kilometre, what is my speed in miles per hour, and how long would {dist} take me?"
        ans = f"{60 / (pace[0] + pace[1] / 60) / 1.609:.2f} mph"
    else:
        watts = rng.choice((60, 800, 1200, 2000, 2500))
        hours = rng.choice((0.5, 1.5, 3, 4, 8))
        price = rng.randint(12, 45)
        q = f"A {watts} W heater runs {hours:g} hours a day for {maybe_words(rng, rng.randint(20, 90))} days. Electricity costs {price} cents per kWh. What does that cost in euros?"
        ans = f"{watts * hours / 1000 * price / 100:.2f} euros per day"
    return conversation(
        rng,
        ask(rng, q),
        answer="Converting step by step: " + ans + ".",
        followups=(
            "and in imperial units?",
            "now for twice the amount",
            "what if the price goes up by 15%?",
            "Redo it with the exact factors.",
        ),
    )


# --- lookups and aggregates over a table given in the prompt ----------------------------------------------------

_TABLES = (
    ("employee", ("name", "department", "salary", "start year"), ("Sales", "Support", "Research", "Finance")),
    ("product", ("item", "category", "price", "stock"), ("garden", "kitchen", "office", "toys")),
    ("flight", ("flight", "destination", "delay (min)", "passengers"), ("Oslo", "Porto", "Riga", "Split")),
    ("student", ("student", "class", "score", "absences"), ("4A", "4B", "4C")),
)


def _table_rows(rng: random.Random, kind: str, groups: tuple[str, ...]) -> list[tuple[str, str, int, int]]:
    n = rng.randint(5, 9)
    names = sample(rng, NAMES, n)  # distinct, so "which student" has one answer
    rows = []
    for i in range(n):
        if kind == "employee":
            rows.append(
                (
                    names[i],
                    pick(rng, groups),
                    rng.randint(30, 95) * 1000,
                    rng.randint(2008, 2024),
                )
            )
        elif kind == "product":
            rows.append(
                (
                    pick(
                        rng,
                        (
                            "hose",
                            "rake",
                            "kettle",
                            "stapler",
                            "yo-yo",
                            "lamp",
                            "trowel",
                            "whisk",
                            "kite",
                            "mug",
                            "puzzle",
                            "shears",
                        ),
                    )
                    + f"-{rng.randint(10, 99)}",
                    pick(rng, groups),
                    rng.randint(3, 80),
                    rng.randint(0, 40),
                )
            )
        elif kind == "flight":
            rows.append(
                (
                    f"{pick(rng, ('GX', 'TP', 'LX', 'NO'))}{rng.randint(100, 999)}",
                    pick(rng, groups),
                    rng.choice((0, 0, 5, 15, 25, 40, 70, 95)),
                    rng.randint(40, 190),
                )
            )
        else:
            rows.append(
                (
                    names[i],
                    pick(rng, groups),
                    rng.randint(35, 100),
                    rng.randint(0, 12),
                )
            )
    return rows


def _tablelookup(rng: random.Random) -> Messages:
    kind, cols, groups = pick(rng, _TABLES)
    rows = _table_rows(rng, kind, groups)
    if rng.random() < 0.55:
        table = (
            "| "
            + " | ".join(cols)
            + " |\n|"
            + "---|" * len(cols)
            + "\n"
            + "\n".join("| " + " | ".join(str(v) for v in r) + " |" for r in rows)
        )
    else:
        table = ",".join(cols) + "\n" + "\n".join(",".join(str(v) for v in r) for r in rows)
    g = pick(rng, [r[1] for r in rows])
    in_g = [r for r in rows if r[1] == g]
    limit = sorted(r[2] for r in rows)[len(rows) // 2]
    qs = (
        (
            f"What is the total {cols[3]} over the rows where {cols[1]} is {g} and {cols[2]} is below {limit}?",
            str(sum(r[3] for r in in_g if r[2] < limit)),
        ),
        (
            f"Which {cols[1]} has the highest average {cols[2]}?",
            max(
                sorted({r[1] for r in rows}),  # sorted: set order varies with PYTHONHASHSEED
                key=lambda k: sum(r[2] for r in rows if r[1] == k) / sum(1 for r in rows if r[1] == k),
            ),
        ),
        (
            f"Among the rows with {cols[1]} {g}, which {cols[0]} has the largest {cols[3]}, and how much bigger is it than the smallest one in that group?",
            max(in_g, key=lambda r: r[3])[0],
        ),
        (
            f"How many rows have a {cols[2]} above the average {cols[2]} of the whole table?",
            str(sum(1 for r in rows if r[2] * len(rows) > sum(x[2] for x in rows))),
        ),
        (
            f"If every {cols[2]} in group {g} went up by 10%, what would the new total {cols[2]} of the table be?",
            f"{sum(r[2] for r in rows) + sum(r[2] for r in in_g) / 10:g}",
        ),
    )
    question, answer = pick(rng, qs)
    lead = pick(
        rng,
        (
            "Here is a table:",
            "Given this data:",
            "From the table below,",
            "Using this CSV export:",
            f"Our {kind} list:",
            "",
        ),
    )
    body = f"{lead}\n\n{table}\n\n{question}" if rng.random() < 0.7 else f"{question}\n\n{table}"
    return conversation(
        rng,
        ask(rng, body.strip(), lead=False),
        answer=f"Filtering and adding up the matching rows: {answer}.",
        followups=(
            "and for the other groups?",
            "now sort the result by the last column",
            "what's the median instead?",
            "exclude the first row and redo it",
        ),
    )


SOURCES: tuple[Source, ...] = (
    Source("gen:wordproblem", "hard", "math-word", LICENCE, _wordproblem),
    Source("gen:unitconv", "hard", "reasoning", LICENCE, _unitconv),
    Source("gen:tablelookup", "hard", "reasoning", LICENCE, _tablelookup),
)
