"""Easy: chat that tells the bot about one's life: a diary-like update, plans for the days ahead, a
reaction to local news. Times, counts, prices and people's names run through all three.

Numbers and names are what puzzles are made of ("Priya has 3 more apples than Tom"), so a model that has
seen them only in hard prompts sends "we're leaving at 7 with Priya and her 2 boys" to the reasoning
backend. easy_rambling.py writes present-tense rambling with a question back; these are three other ways
of writing: a log of the day in time order, a plan with days and times, and news retold with a comment.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import chat, make, noisy, pick
from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_PEOPLE = (
    "Priya", "Jamal", "Grandma Rose", "my sister Ana", "Tomasz", "Keiko", "Uncle Dev", "Fatou", "Liam",
    "Mrs Okafor next door", "my boss Helen", "Chen", "Rafa", "Ingrid", "our neighbour Sol", "Amir",
)  # fmt: skip


def _time(rng: random.Random) -> str:
    hour = rng.randint(5, 11)
    style = rng.random()
    if style < 0.4:
        return f"{hour}{pick(rng, ('am', ' am', ':30', ':15', ':45'))}"
    if style < 0.7:
        return f"{hour} {pick(rng, ('in the evening', 'pm', 'tonight', 'sharp'))}"
    return f"{rng.randint(6, 21):02d}:{pick(rng, ('00', '15', '30', '45'))}"


# --- a diary of today, in time order ------------------------------------------------------------------

_DAY_MARK = (
    "Day {d} of the new job.",
    "Dear diary (well, dear bot):",
    "Quick update on my day.",
    "Today in review:",
    "Long day, here's how it went.",
    "Monday recap.",
    "So, today.",
    "",
)
_EVENTS = (
    "Up at {am}, which is way too early for me.",
    "The bus was {n} minutes late again.",
    "{p} brought in a cake for their birthday, {age} today.",
    "Walked {k} steps according to my watch.",
    "Had a {n}-hour meeting that could have been an email.",
    "Lunch with {p}, we talked about nothing for an hour and it was great.",
    "Paid {money} for a sandwich, which is daylight robbery.",
    "Picked up my {n} kids from school at {t}.",
    "Ran {km} km after work, slowest time ever but I did it.",
    "{p} called at {t} just to talk about their new cat.",
    "Finished the book {p} lent me, all {pages} pages.",
    "Tried a new recipe, burned it, ordered pizza at {t}.",
    "Got my exam result: {pct}%!",
    "The heating broke so we're all in jumpers, it's {deg} degrees inside.",
    "Cleaned the flat for {n} hours straight.",
)
_FEELING = (
    "Tired but happy.",
    "Not my best day, honestly.",
    "Feeling weirdly proud of myself.",
    "Can't wait for bed.",
    "Anyway, that's my day.",
    "Tomorrow has to be better.",
    "",
)
_DIARY_BACK = ("How was yours?", "What did you get up to?", "Tell me something nice?", "", "", "")


def _diary(rng: random.Random) -> Messages:
    # each event its own people and times: a day has several, and one name in every sentence would read
    # like the cast of a puzzle
    events = [e.format(**_slots(rng)) for e in rng.sample(_EVENTS, rng.randint(2, 4))]
    day = pick(rng, _DAY_MARK).format(**_slots(rng))
    parts = [day, *events, pick(rng, _FEELING), pick(rng, _DIARY_BACK)]
    text = " ".join(p for p in parts if p)
    history: list[tuple[str, str]] = []
    if rng.random() < 0.2:
        history.append(("evening!", pick(rng, ("Evening! How did today go?", "Hi! Tell me about your day."))))
    return chat(rng, noisy(rng, text), history=history)


# --- plans for the days ahead -------------------------------------------------------------------------

_WHEN = (
    "This Saturday",
    "Tomorrow",
    "On Friday",
    "Next weekend",
    "Sunday",
    "Over the bank holiday",
    "Tonight",
)
_PLANS = (
    "{when} we're driving to the coast with {p} and the {n} boys, leaving around {t}.",
    "{when} is my mum's {big}th, dinner at {t} for {guests} people.",
    "{when} {p} and I are finally painting the spare room.",
    "{when} I'm doing a {km}k fun run, first one in {n} years.",
    "{when} we've got {p}'s wedding, {guests} guests and an open bar.",
    "{when} I'm taking the {t} train to see {p}.",
    "{when} the kids have a football tournament, {n} games back to back.",
    "{when} it's movie night at ours, {p} is bringing snacks.",
    "{when} I'm going to try to sleep until {t} and do nothing else.",
    "{when} we're hosting a barbecue for about {guests} people.",
)
_AFTER = (
    "Then on Monday it's back to work at {t}.",
    "It's supposed to rain, of course.",
    "The drive is about {n} hours each way.",
    "Budget is {money}, wish me luck.",
    "{p} is in charge of the music, which worries me.",
    "Busy, busy!",
    "",
)
_PLANS_BACK = (
    "Any plans yourself?",
    "Do you like the seaside?",
    "Sounds fun, right?",
    "Wish me luck!",
    "What would you wear to that?",
    "",
)


def _plans(rng: random.Random) -> Messages:
    slots = _slots(rng)
    plans = [p.format(**slots) for p in rng.sample(_PLANS, rng.randint(1, 2))]
    # the second plan must not start with the same day word as the first
    if len(plans) == 2:
        plans[1] = plans[1].replace(slots["when"], pick(rng, ("After that", "And later", "Then")), 1)
    parts = [*plans, pick(rng, _AFTER).format(**slots), pick(rng, _PLANS_BACK)]
    if rng.random() < 0.3:
        parts.insert(0, pick(rng, ("Guess what!", "So!", "Big weekend coming up.", "Ok, plans update:")))
    text = " ".join(p for p in parts if p)
    return chat(rng, noisy(rng, text))


# --- local news retold with a comment -----------------------------------------------------------------

_NEWS = (
    "the council is closing the bridge on Mill Road for {n} months",
    "our bakery on the corner is shutting after {years} years",
    "they're building {guests} new flats where the old cinema was",
    "bus fares go up to {money} from next month",
    "the town finally got its first Thai restaurant",
    "{p} won {money} in the local raffle",
    "the library is now open until {t} on Thursdays",
    "our football club got promoted after {years} years",
    "there's a {km}-mile traffic jam on the ring road because of roadworks",
    "a {big}-year-old woman from our street ran a marathon",
    "the summer fair is moving from June to September",
)
_NEWS_LEAD = ("Did you hear", "Can you believe", "So apparently", "Just read that", "{p} told me")
_REACTION = (
    "My commute will take forever now lol.",
    "Honestly, what a mess.",
    "Love that for them!",
    "End of an era.",
    "About time, to be fair.",
    "I don't know whether to laugh or cry.",
    "Everyone in the group chat is furious.",
    "Made my morning, that did.",
)
_NEWS_BACK = ("Crazy, right?", "What do you think?", "Isn't that nice?", "Typical.", "", "")


def _news(rng: random.Random) -> Messages:
    slots = _slots(rng)
    lead = pick(rng, _NEWS_LEAD).format(**slots)
    news = pick(rng, _NEWS).format(**slots)
    sep = "? " if lead in ("Did you hear", "Can you believe") else ". "
    text = f"{lead} {news}{sep}" + " ".join(
        p for p in (*rng.sample(_REACTION, rng.randint(1, 2)), pick(rng, _NEWS_BACK)) if p
    )
    history: list[tuple[str, str]] = []
    if rng.random() < 0.15:
        history.append(("hi, got some gossip", "Ooh, I'm listening!"))
    return chat(rng, noisy(rng, text), history=history)


def _slots(rng: random.Random) -> dict[str, str]:
    return {
        "p": pick(rng, _PEOPLE),
        "t": _time(rng),
        "am": f"{rng.randint(4, 7)}{pick(rng, ('am', ':30', ' am', ':45', ' in the morning'))}",
        "n": str(rng.randint(2, 6)),
        "d": str(rng.randint(2, 30)),
        "age": str(rng.randint(25, 60)),
        "big": str(pick(rng, (30, 40, 50, 60, 65, 70, 75, 80, 90))),
        "k": f"{rng.randint(4, 22)},{rng.randint(0, 9)}00",
        "km": str(rng.randint(3, 21)),
        "pages": str(rng.randint(180, 720)),
        "pct": str(rng.randint(55, 98)),
        "deg": str(rng.randint(12, 17)),
        "guests": str(rng.randint(8, 120)),
        "years": str(rng.randint(10, 60)),
        "money": pick(rng, ("£4.20", "$12", "€9.50", "£250", "$1,000", "£3", "€60", "$7.99")),
        "when": pick(rng, _WHEN),
    }


SOURCES: tuple[Source, ...] = (
    make("gen:smalltalk-diary", "smalltalk", _diary),
    make("gen:smalltalk-plans", "smalltalk", _plans),
    make("gen:smalltalk-news", "smalltalk", _news),
)
