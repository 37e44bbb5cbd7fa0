"""Easy: what-ifs, would-you-rathers and musings, the idle questions people put to a chat bot.

"If cats could talk, which one would be the rudest?", "would you rather never eat cheese again or
always be ten minutes late", "honestly if dinosaurs were alive we'd all just stay home lol". They have
the shape that reasoning puzzles have (an "if", two options to choose between, a "which one") and no
answer to work out: any friendly reply will do. No other source writes them; real chit-chat
(``pypi:chitchat-dataset``) is full of them, and held out its hypotheticals went to the autoregressive
backend. English, some German, Spanish and French; one turn, or a follow-up to the bot's
answer ("haha ok but what about dogs?").
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import chat, make, noisy, pick
from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_BEINGS = ("cats", "dogs", "pigeons", "goats", "penguins", "houseplants", "cows", "seagulls", "hamsters")
_TRAITS = ("rudest", "funniest", "most dramatic", "laziest", "most polite", "best at gossip", "bossiest")
_RATHER = (
    "never eat cheese again",
    "always be ten minutes late",
    "live by the sea",
    "live in the mountains",
    "have a cat that talks",
    "be able to fly",
    "be invisible for a day",
    "only listen to one song forever",
    "never use a phone again",
    "have summer all year",
    "speak every language",
    "play every instrument",
    "travel back in time",
    "see the future",
    "give up coffee",
    "give up chocolate",
)
_IF_YOU = (
    "won the lottery tomorrow",
    "woke up as a cat",
    "had a whole free day and no phone",
    "could live in any city",
    "could have dinner with anyone ever",
    "had one superpower",
    "could swap lives with someone for a week",
    "were the boss for a day",
    "could only eat one food forever",
)
_THINGS = ("aliens", "dinosaurs", "robots", "ghosts", "mermaids", "vampires", "unicorns")
_LIKES = (
    "like pizza",
    "be good at karaoke",
    "enjoy football",
    "get along with my cat",
    "be scared of the dark",
    "use social media",
    "like the rain",
)
_MUSINGS = (
    "honestly if {things} were real we'd all just stay home",
    "if {beings} ruled the world we'd all nap at 3pm",
    "imagine {beings} running a coffee shop",
    "sometimes I think {beings} know exactly what they're doing",
    "if {things} showed up tomorrow nobody would even be surprised anymore",
    "I bet {things} would {likes}",
)
_QUESTIONS = (
    "If {beings} could talk, which one would be the {trait}?",
    "Would you rather {a} or {b}?",
    "What would you do if you {if_you}?",
    "Do you think {things} would {likes}?",
    "Which would be worse: to {a} or to {b}?",
    "If you {if_you}, what's the first thing you'd do?",
    "Be honest, {beings} or {beings2}: who would win a staring contest?",
    "What's the most overrated snack in your opinion?",
    "Is a hot dog a sandwich? I need to settle this.",
)
_OPENERS = (
    "random question: ",
    "ok weird question but ",
    "",
    "",
    "",
    "hey, ",
    "so... ",
    "late night thought: ",
)
_TAILS = ("", "", " lol", " 😂", " thoughts?", " be honest", " 🤔", " haha")
_FOLLOW_UPS = (
    "haha ok but what about {beings}?",
    "no way, I'd pick {a}",
    "fair. mine would be {beings}",
    "lol same",
    "ok and what if it was {things} instead?",
    "you didn't answer, which one?",
    "hmm I'm not sure I agree 😄",
)
_REPLIES = (
    "Ha, tough one! I'd probably go with the first.",
    "Oh, that's a fun one. Definitely the goats.",
    "I think I'd choose the sea, honestly.",
    "That would be chaos, in the best way.",
)
_QUESTIONS_DE = (
    "Würdest du lieber {a_de} oder {b_de}?",
    "Wenn Tiere sprechen könnten, welches wäre am frechsten?",
    "Was würdest du tun, wenn du morgen im Lotto gewinnst?",
    "Glaubst du, Aliens würden Pizza mögen?",
)
_RATHER_DE = ("nie wieder Käse essen", "immer zehn Minuten zu spät sein", "am Meer wohnen", "fliegen können")
_QUESTIONS_ES = (
    "¿Preferirías {a_es} o {b_es}?",
    "Si los animales pudieran hablar, ¿cuál sería el más gracioso?",
    "¿Qué harías si ganaras la lotería mañana?",
    "¿Crees que a los dinosaurios les gustaría el karaoke?",
)
_RATHER_ES = (
    "no volver a comer queso",
    "llegar siempre diez minutos tarde",
    "vivir junto al mar",
    "poder volar",
)
_QUESTIONS_FR = (
    "Tu préférerais {a_fr} ou {b_fr} ?",
    "Si les chats pouvaient parler, lequel serait le plus insolent ?",
    "Qu'est-ce que tu ferais si tu gagnais au loto demain ?",
)
_RATHER_FR = ("ne plus jamais manger de fromage", "être toujours en retard de dix minutes", "savoir voler")


def _slots(rng: random.Random) -> dict[str, str]:
    a, b = rng.sample(_RATHER, 2)
    beings, beings2 = rng.sample(_BEINGS, 2)
    slots = {"a": a, "b": b, "beings": beings, "beings2": beings2}
    slots.update(trait=pick(rng, _TRAITS), if_you=pick(rng, _IF_YOU), things=pick(rng, _THINGS))
    slots["likes"] = pick(rng, _LIKES)
    for lang, pool in (("de", _RATHER_DE), ("es", _RATHER_ES), ("fr", _RATHER_FR)):
        slots[f"a_{lang}"], slots[f"b_{lang}"] = rng.sample(pool, 2)
    return slots


def _english(rng: random.Random, slots: dict[str, str]) -> str:
    if rng.random() < 0.25:
        text = pick(rng, _MUSINGS).format(**slots)
        return text + pick(rng, ("", " haha", ". right?", " 🙃", ". what do you think?"))
    opener, question = pick(rng, _OPENERS), pick(rng, _QUESTIONS).format(**slots)
    if opener:
        question = question[:1].lower() + question[1:]
    return opener + question + pick(rng, _TAILS)


def _draw(rng: random.Random) -> Messages:
    lang = pick(rng, ("en",) * 7 + ("de", "es", "fr"))
    slots = _slots(rng)
    if lang == "en":
        text = _english(rng, slots)
    else:
        questions = {"de": _QUESTIONS_DE, "es": _QUESTIONS_ES, "fr": _QUESTIONS_FR}[lang]
        text = pick(rng, questions).format(**slots)
    history: list[tuple[str, str]] = []
    if lang == "en" and rng.random() < 0.25:
        history.append((text, pick(rng, _REPLIES)))
        text = pick(rng, _FOLLOW_UPS).format(**_slots(rng))
    return chat(rng, noisy(rng, text, lang), lang=lang, history=history)


SOURCES: tuple[Source, ...] = (make("gen:smalltalk-what-if", "smalltalk", _draw),)
