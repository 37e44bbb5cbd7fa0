"""Easy: one thing that happened, told with its numbers, and a reaction or a question back to the bot.

A match score, a race time, a trip's distance and hours, a price paid, a child's age, a harvest: the
numbers, times and names that puzzles are made of, in a turn that asks nothing to be worked out ("We lost
3-1 and Dev missed two penalties, can you believe it?"). ``easy_diary.py`` writes a list of the day's
events in time order; this is a second hand: one story per turn, told in the past or the present, ending
on a feeling or a question about the bot or the teller. English, some German and Spanish: a day told
with its times and names is small talk, not a word problem.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import chat, make, noisy, pick
from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_NAMES = ("Dev", "Marta", "Kofi", "Yuki", "Sean", "Lena", "Omar", "Bea", "Arjun", "Noor", "Tom", "Ines")
_STORIES = (
    "We lost {a}-{b} on Saturday and {p} missed two penalties.",
    "Our team won {big}-{b} last night, first win in {n} weeks!",
    "Just did my first {km}k run in {mins} minutes.",
    "Drove {dist} km to see my parents, took us {n} hours with {small} stops.",
    "My little one turned {age} today and asked for a dinosaur cake.",
    "Paid {money} for two coffees at the airport this morning.",
    "The garden gave us {kg} kg of tomatoes this year, I have no idea what to do with them.",
    "{p} and I have been together {years} years as of today.",
    "Spent {n} hours painting the hallway and it still looks patchy.",
    "Our flight was delayed {mins} minutes and then they lost my bag.",
    "Sold my old bike for {money}, a bit sad to see it go.",
    "{p} beat me at chess {big} times in a row last night.",
    "I've read {n} books this month, a record for me.",
    "The concert started at {clock} and we got home at {late}.",
    "Grandpa is {old} and still walks {km} km every morning.",
    "Got {pct}% on my driving theory test, on the {nth} try.",
    "We had {guests} people at the party and ran out of ice by {clock}.",
    "My phone says I slept {sleep} hours last night.",
    "Booked {n} nights in {city} for our anniversary.",
    "I've been learning the guitar for {n} months and can finally play {small} songs.",
    "It was {deg} degrees at the beach today, the water was freezing.",
    "Lost {kg} kg since January, slowly but surely.",
    "The queue at the post office was {mins} minutes long, with {small} people working.",
    "{p} baked {big} cupcakes for the school fair and they sold out by {clock}.",
)
_ENDINGS = (
    "Can you believe it?",
    "Not bad, right?",
    "What a week.",
    "Honestly so proud.",
    "What would you have done?",
    "Is that normal?",
    "Anyway, how's your day going?",
    "Just had to tell someone 😅",
    "Ugh.",
    "Wish me luck for next time!",
    "lol",
    "Say something nice, please.",
    "Do you like that kind of thing?",
    "",
)
_STORIES_DE = (
    "Wir haben am Samstag {a}:{b} verloren, {p} hat zwei Elfmeter verschossen.",
    "Bin heute meine ersten {km} km in {mins} Minuten gelaufen!",
    "Sind {dist} km zu meinen Eltern gefahren, {n} Stunden mit {small} Pausen.",
    "Meine Kleine ist heute {age} geworden.",
    "Hab {money} für zwei Kaffee am Flughafen bezahlt.",
    "Das Konzert ging um {clock} los und wir waren erst um {late} zu Hause.",
)
_ENDINGS_DE = (
    "Kannst du das glauben?", "Nicht schlecht, oder?", "Was für eine Woche.", "Bin echt stolz.", ""
)  # fmt: skip
_STORIES_ES = (
    "Perdimos {a}-{b} el sábado y {p} falló dos penaltis.",
    "¡Hoy corrí mis primeros {km} km en {mins} minutos!",
    "Condujimos {dist} km para ver a mis padres, {n} horas con {small} paradas.",
    "Mi peque cumplió {age} años hoy.",
    "Pagué {money} por dos cafés en el aeropuerto.",
    "El concierto empezó a las {clock} y llegamos a casa a las {late}.",
)
_ENDINGS_ES = ("¿Te lo puedes creer?", "No está mal, ¿no?", "Qué semana.", "Estoy muy orgulloso.", "")
_REPLIES = ("Oh no!", "That's amazing!", "Wow, well done!", "Ha, classic.", "¡Qué bien!", "Super!")
_CITIES = ("Porto", "Kraków", "Edinburgh", "Kyoto", "Valencia", "Bruges")


def _slots(rng: random.Random) -> dict[str, str]:
    big = rng.randint(3, 9)
    return {
        "a": str(rng.randint(0, 4)),
        "b": str(rng.randint(0, 2)),
        "big": str(big),
        "small": str(rng.randint(2, 4)),
        "n": str(rng.randint(2, 12)),
        "km": str(pick(rng, (5, 10, 15, 21, 42))),
        "mins": str(rng.randint(20, 95)),
        "dist": str(rng.randint(80, 900)),
        "age": str(rng.randint(2, 12)),
        "old": str(rng.randint(78, 96)),
        "years": str(rng.randint(2, 40)),
        "kg": str(rng.randint(3, 25)),
        "money": pick(rng, ("£9", "€11.40", "$14", "£120", "€80", "$65")),
        "clock": pick(rng, ("8", "8:30", "20:00", "9 pm", "7.30")),
        "late": pick(rng, ("1 am", "midnight", "00:45", "2")),
        "pct": str(rng.randint(80, 100)),
        "nth": pick(rng, ("second", "third", "first")),
        "guests": str(rng.randint(12, 60)),
        "sleep": str(rng.randint(4, 10)),
        "deg": str(rng.randint(14, 34)),
        "city": pick(rng, _CITIES),
        "p": pick(rng, _NAMES),
    }


def _draw(rng: random.Random) -> Messages:
    lang = pick(rng, ("en",) * 6 + ("de", "es"))
    stories, endings = {
        "en": (_STORIES, _ENDINGS),
        "de": (_STORIES_DE, _ENDINGS_DE),
        "es": (_STORIES_ES, _ENDINGS_ES),
    }[lang]
    slots = _slots(rng)
    told = [pick(rng, stories).format(**slots) for _ in range(rng.choice((1, 1, 2)))]
    text = " ".join([*dict.fromkeys(told), pick(rng, endings)]).strip()
    history: list[tuple[str, str]] = []
    if rng.random() < 0.2:
        history.append((pick(rng, stories).format(**_slots(rng)), pick(rng, _REPLIES)))
    return chat(rng, noisy(rng, text, lang), lang=lang, history=history)


SOURCES: tuple[Source, ...] = (make("gen:smalltalk-life-numbers", "smalltalk", _draw),)
