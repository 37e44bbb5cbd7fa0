# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard date and time prompts: journeys with stops, time zones, weekdays ahead, spans between dates, cooking
backwards from a deadline; and meeting scheduling under people's constraints.

Answers are computed with ``datetime`` so multi-turn examples carry a correct assistant turn.
"""

from __future__ import annotations

import datetime as dt
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

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_CITIES = (
    ("Lisbon", 0), ("London", 0), ("Madrid", 1), ("Berlin", 1), ("Athens", 2), ("Istanbul", 3),
    ("Dubai", 4), ("Karachi", 5), ("Delhi", 5.5), ("Bangkok", 7), ("Singapore", 8), ("Tokyo", 9),
    ("Sydney", 10), ("Auckland", 12), ("New York", -5), ("Chicago", -6), ("Denver", -7),
    ("Los Angeles", -8), ("Sao Paulo", -3), ("Reykjavik", 0), ("Nairobi", 3), ("Lagos", 1),
)  # fmt: skip


def _clock(rng: random.Random, t: dt.datetime) -> str:
    """A time of day in one of several spoken or written styles."""
    h, m = t.hour, t.minute
    style = rng.random()
    if style < 0.45:
        return f"{h}:{m:02d}"
    if style < 0.75:
        suffix = "am" if h < 12 else "pm"
        return f"{(h % 12) or 12}:{m:02d} {suffix}" if m else f"{(h % 12) or 12} {suffix}"
    if style < 0.88 and m in (15, 30, 45) and 0 < h < 23:
        spoken = {15: "quarter past {h}", 30: "half past {h}", 45: "quarter to {n}"}[m]
        part = " in the morning" if h < 12 else (" in the afternoon" if h < 18 else " in the evening")
        return spoken.format(h=number_word(h % 12 or 12), n=number_word((h + 1) % 12 or 12)) + part
    return f"{h:02d}{m:02d}" + pick(rng, (" hours", "h"))


def _duration(rng: random.Random, minutes: int) -> str:
    h, m = divmod(minutes, 60)
    style = rng.random()
    if style < 0.3:
        return (f"{h} h {m} min" if m else f"{h} h") if h else f"{m} min"
    if style < 0.6:
        hs = f"{maybe_words(rng, h, 0.5)} hour{'s' if h != 1 else ''}" if h else ""
        ms = f"{maybe_words(rng, m, 0.5)} minutes" if m else ""
        return " and ".join(x for x in (hs, ms) if x)
    if style < 0.8:
        return f"{minutes} minutes"
    return f"{h}h{m:02d}"


def _base_time(rng: random.Random) -> dt.datetime:
    return dt.datetime(
        2025, 1, 6, rng.randint(5, 22), rng.choice((0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55))
    )


def _journey(rng: random.Random) -> tuple[str, str]:
    start = _base_time(rng)
    legs = [rng.randint(20, 200) for _ in range(rng.randint(1, 3))]
    stops = [rng.choice((5, 10, 15, 20, 25, 40)) for _ in legs[:-1]]
    delay = rng.choice((0, 0, 10, 15, 25))
    total = sum(legs) + sum(stops) + delay
    arrive = start + dt.timedelta(minutes=total)
    vehicle = pick(rng, ("train", "bus", "ferry", "coach", "night train"))
    parts = [f"The {vehicle} leaves at {_clock(rng, start)}."]
    for i, leg in enumerate(legs):
        parts.append(f"{'The first leg' if i == 0 else 'The next leg'} takes {_duration(rng, leg)}.")
        if i < len(stops):
            parts.append(f"Then it waits {_duration(rng, stops[i])} at a station.")
    if delay:
        parts.append(f"It is held up {_duration(rng, delay)} somewhere on the way.")
    q = pick(
        rng,
        (
            "When does it arrive?",
            "What time does it get in?",
            "At what time should I be at the platform to meet it?",
            "Will it arrive before midnight, and at what time exactly?",
        ),
    )
    return " ".join(
        parts
    ) + " " + q, f"It arrives at {arrive:%H:%M}{' the next day' if arrive.day != start.day else ''}."


def _timezone(rng: random.Random) -> tuple[str, str]:
    (a, oa), (b, ob) = sample(rng, _CITIES, 2)
    start = _base_time(rng)
    flight = rng.randint(60, 14 * 60)
    layover = rng.choice((0, 0, 45, 90, 150))
    arrive = start + dt.timedelta(minutes=flight + layover + int((ob - oa) * 60))
    lay = f" with a layover of {_duration(rng, layover)}" if layover else ""
    q = pick(
        rng,
        (
            f"My flight leaves {a} at {_clock(rng, start)} local time and the flying time is {_duration(rng, flight)}{lay}. {b} is {abs(ob - oa):g} hours {'ahead of' if ob > oa else 'behind'} {a}. What is the local time in {b} when I land?",
            f"I'm calling from {a} at {_clock(rng, start)}. My colleague in {b} (UTC{ob:+g}) needs {_duration(rng, flight)} to prepare{lay}. {a} is on UTC{oa:+g}. What time will it be for her when she's ready, her local time?",
            f"Departure {a} {_clock(rng, start)} (UTC{oa:+g}), travel time {_duration(rng, flight)}{lay}, destination {b} (UTC{ob:+g}). Local arrival time, and is it the same calendar day?",
        ),
    )
    day = (
        " the next day"
        if arrive.date() > start.date()
        else (" the previous day" if arrive.date() < start.date() else "")
    )
    return q, f"{arrive:%H:%M} local time{day}."


def _weekday(rng: random.Random) -> tuple[str, str]:
    d0 = rng.randrange(7)
    n = rng.choice((rng.randint(10, 60), rng.randint(61, 400), rng.randint(401, 1200)))
    back = rng.random() < 0.3
    target = (d0 - n) % 7 if back else (d0 + n) % 7
    q = pick(
        rng,
        (
            f"If today is {_WEEKDAYS[d0]}, what day of the week will it be {maybe_words(rng, n)} days from now?",
            f"Today is a {_WEEKDAYS[d0]}. What weekday was it {maybe_words(rng, n)} days ago?"
            if back
            else f"Today is a {_WEEKDAYS[d0]}. My visa runs out in {maybe_words(rng, n)} days. Which weekday is that?",
            f"A plant is watered every {number_word(rng.randint(3, 9))} days starting on a {_WEEKDAYS[d0]}. On which weekday does the {_ord(rng.randint(5, 30))} watering fall?",
        ),
    )
    return q, f"{_WEEKDAYS[target]}."


def _ord(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _span(rng: random.Random) -> tuple[str, str]:
    year = rng.choice((2023, 2024, 2025, 2026, 2027, 2028))
    a = dt.date(year, 1, 1) + dt.timedelta(days=rng.randrange(300))
    b = a + dt.timedelta(days=rng.randint(20, 500))
    fmt = pick(rng, ("%B %d, %Y", "%d %B %Y", "%Y-%m-%d", "%A %d %B %Y"))
    kind = rng.random()
    if kind < 0.4:
        q = f"How many days are there from {a.strftime(fmt)} to {b.strftime(fmt)}, counting both the first and the last day?"
        ans = f"{(b - a).days + 1} days."
    elif kind < 0.7:
        q = f"My lease started on {a.strftime(fmt)} and runs for {maybe_words(rng, (b - a).days)} days. On what date and weekday does it end?"
        ans = f"{b:%A %d %B %Y}."
    else:
        born = dt.date(year - rng.randint(10, 60), rng.randint(1, 12), rng.randint(1, 28))
        q = f"Someone born on {born.strftime(fmt)}: how old are they on {b.strftime(fmt)}, and how many days until their next birthday from then?"
        age = b.year - born.year - ((b.month, b.day) < (born.month, born.day))
        ans = f"They are {age}."
    return q, ans


def _backwards(rng: random.Random) -> tuple[str, str]:
    end = _base_time(rng).replace(hour=rng.randint(11, 21))  # a meal or an event, not at dawn
    steps = [
        (
            pick(rng, ("roasting", "baking", "proofing the dough", "simmering the stock", "marinating")),
            rng.randint(30, 180),
        ),
        (
            pick(rng, ("resting", "cooling", "plating", "a walk to the venue", "driving there")),
            rng.randint(10, 50),
        ),
        (pick(rng, ("prep", "chopping and mixing", "getting ready", "packing the car")), rng.randint(10, 45)),
    ]
    rng.shuffle(steps)
    start = end - dt.timedelta(minutes=sum(m for _, m in steps))
    guests = pick(
        rng, ("Guests arrive", "Dinner is served", "The party starts", "We must leave", "The ceremony begins")
    )
    listing = ", ".join(f"{name} takes {_duration(rng, m)}" for name, m in steps)
    q = f"{guests} at {_clock(rng, end)}. {listing[0].upper() + listing[1:]}, and these happen one after another with no overlap. What is the latest time I can start?"
    return q, f"Start by {start:%H:%M}."


# Each kind with the terse follow-ups that make sense after it.
_TIME_KINDS = (
    (
        _journey,
        (
            "and if it left at 10 instead?",
            "what if there's an extra 25 min delay?",
            "and the return trip, leaving three hours after it gets in?",
        ),
    ),
    (
        _timezone,
        (
            "and the flight back, leaving two days later at the same local time?",
            "what if the layover doubles?",
            "now from the other city",
        ),
    ),
    (
        _weekday,
        (
            "and 1000 days?",
            "what about the same number of days in the past?",
            "now do it for 5 different start days",
        ),
    ),
    (_span, ("And counting only weekdays?", "and if it were a leap year?", "how many full weeks is that?")),
    (
        _backwards,
        (
            "and if dinner moved to 8:15?",
            "what if two of the steps can overlap?",
            "redo it with the oven taking 20 min longer",
        ),
    ),
)


def _timecalc(rng: random.Random) -> Messages:
    kind, followups = pick(rng, _TIME_KINDS)
    q, a = kind(rng)
    return conversation(rng, ask(rng, q), answer="Adding it up step by step: " + a, followups=followups)


# --- scheduling: find slots on a 30-minute grid --------------------------------------------------------------

_WHY = (
    "has a dentist appointment",
    "teaches a class",
    "is on another call",
    "is at the gym",
    "picks up the kids",
    "has a standing one-to-one",
    "is travelling",
)


def _slot_text(rng: random.Random, a: int, b: int) -> str:
    t = dt.datetime(2025, 1, 6) + dt.timedelta(minutes=a * 30)
    u = dt.datetime(2025, 1, 6) + dt.timedelta(minutes=b * 30)
    return pick(
        rng,
        (
            f"from {_clock(rng, t)} to {_clock(rng, u)}",
            f"between {_clock(rng, t)} and {_clock(rng, u)}",
            f"{t:%H:%M}-{u:%H:%M}",
        ),
    )


def _scheduling(rng: random.Random) -> Messages:
    n = rng.randint(3, 5)
    people = sample(rng, NAMES, n)
    day_start, day_end = 16, 36  # 8:00 to 18:00 in half hours
    length = rng.choice((1, 2, 2, 3))
    for _ in range(100):
        busy: dict[str, list[tuple[int, int]]] = {}
        lines = []
        for p in people:
            spans = []
            for _ in range(rng.randint(1, 3)):
                a = rng.randint(day_start, day_end - 2)
                b = min(day_end, a + rng.randint(1, 5))
                spans.append((a, b))
            busy[p] = spans
        extra = rng.random()
        if extra < 0.35:
            late = rng.randint(20, 26)
            nobody_before = pick(rng, people)
            busy[nobody_before].append((day_start, late))
        free = [
            s
            for s in range(day_start, day_end - length + 1)
            if all(not (s < b and s + length > a) for spans in busy.values() for a, b in spans)
        ]
        if 1 <= len(free) <= 4:
            break
    for p in people:
        spans = busy[p]
        text = " and ".join(_slot_text(rng, a, b) for a, b in spans)
        lines.append(
            pick(rng, (f"{p} is busy {text}.", f"{p} {pick(rng, _WHY)} {text}.", f"{p} can't do {text}."))
        )
    rng.shuffle(lines)
    dur = _duration(rng, length * 30)
    body = pick(
        rng,
        (
            f"I need to book a {dur} meeting with {', '.join(people)} tomorrow, within office hours (8 to 6). ",
            f"Find a {dur} slot where {', '.join(people)} are all free, between 8:00 and 18:00. ",
            f"Scheduling problem: a {dur} call, everyone below must attend, working day 8am-6pm. ",
        ),
    ) + pick(rng, (" ", "\n")).join(lines)
    if rng.random() < 0.4:
        body += " Nobody wants to meet during lunch if it can be avoided, 12:00 to 13:00."
    body += " " + pick(
        rng,
        (
            "Which start times work?",
            "What is the earliest possible start?",
            "Is there any slot at all? List them.",
            "When should I schedule it?",
        ),
    )
    starts = (
        ", ".join(f"{(dt.datetime(2025, 1, 6) + dt.timedelta(minutes=s * 30)):%H:%M}" for s in free) or "none"
    )
    return conversation(
        rng,
        ask(rng, body),
        answer=f"Intersecting everyone's free time, the possible start times are: {starts}.",
        followups=(
            "now make it 90 minutes",
            "What if one of them can join remotely only after 3pm?",
            "and if we add a fifth person who is free only in the morning?",
            "ok now for 5 people",
        ),
    )


SOURCES: tuple[Source, ...] = (
    Source("gen:timecalc", "hard", "reasoning", LICENCE, _timecalc),
    Source("gen:scheduling", "hard", "reasoning", LICENCE, _scheduling),
)
