"""Easy: chatty turns of several sentences, the way people talk to a companion bot.

The other small-talk sources are one-liners ("how's your day?"). Real chit-chat often runs longer: a
few sentences about one's day, a friend or a singer by name, a number or two ("slept 5 hours", "my 3
kids", "at 7am"), an opinion and a question back. Names, numbers and several questions are also what
puzzles are made of, so without this source a long friendly message reads as a hard one.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import chat, make, noisy, pick
from gateway_training.sources import Messages, Source

_FRIENDS = ("Sarah", "Tom", "Priya", "Marco", "Aisha", "Ben", "Lucy", "Kenji", "Olivia", "Dan", "Mia", "Sam")
_STARS = (
    "Taylor Swift", "Harry Styles", "Beyoncé", "Ed Sheeran", "Zendaya", "Keanu Reeves", "Dua Lipa",
    "Pedro Pascal", "Billie Eilish", "Ryan Gosling", "Adele", "Bad Bunny",
)  # fmt: skip
_THINGS = (
    "pizza", "hiking", "rainy Sundays", "old movies", "board games", "karaoke", "baking bread", "road trips",
    "cats", "jazz", "reality TV", "camping", "thrift shopping", "gardening",
)  # fmt: skip

_OPENERS = (
    "Hey!",
    "Hi there.",
    "Ugh, what a day.",
    "Guess what?",
    "Okay so.",
    "Morning!",
    "Hello again :)",
    "Hiii",
    "So tired today lol.",
    "",
)
_MIDDLE = (
    "I only slept {n} hours last night because {friend} kept texting me.",
    "My {n} kids are finally asleep and I can breathe.",
    "I just got back from {friend}'s birthday party, it was so much fun.",
    "Did you hear {star} has a new project coming out?",
    "I've been listening to {star} all week and I'm not even sorry.",
    "Honestly I could eat {food} every day.",
    "Work was boring, my boss talked for {n} hours about nothing.",
    "It's {weather} here again and I'm stuck inside.",
    "I finally tried {thing} last weekend and I kind of loved it.",
    "My neighbour's dog barked from {h} am until sunrise.",
    "{friend} says I'm too obsessed with {thing}, which is fair.",
    "We're going to see {star} live in {month}, I can't wait!!",
    "I've watched the same show {n} times now, is that weird?",
    "Coffee number {n} today and it's not even noon.",
    "My mum called and we talked for like an hour about {thing}.",
    "I think I'm finally getting better at {thing}.",
    "Spent {n} dollars on snacks, no regrets.",
)
_QUESTIONS = (
    "What about you?",
    "How's your day going?",
    "Do you like {thing}?",
    "What's your favourite song right now?",
    "Have you ever tried {thing}?",
    "Who's your favourite singer?",
    "Am I weird for that?",
    "What would you do?",
    "Do you ever get tired of talking to people?",
    "Tell me something fun.",
    "What do you think of {star}?",
    "Anyway, how are you?",
    "",
)
_WEATHER = ("raining", "freezing", "super hot", "windy", "grey", "snowing")
_MONTHS = ("March", "June", "August", "October", "December")


def _draw(rng: random.Random) -> Messages:
    slots = {
        "friend": pick(rng, _FRIENDS),
        "star": pick(rng, _STARS),
        "thing": pick(rng, _THINGS),
        "food": pick(rng, ("pizza", "tacos", "sushi", "pancakes", "ramen", "chocolate", "curry")),
        "weather": pick(rng, _WEATHER),
        "month": pick(rng, _MONTHS),
        "n": str(rng.randint(2, 12)),
        "h": str(rng.randint(2, 5)),
    }
    parts = [pick(rng, _OPENERS)]
    parts += [s.format(**slots) for s in rng.sample(_MIDDLE, rng.randint(1, 4))]
    parts += [q.format(**slots) for q in rng.sample(_QUESTIONS, rng.randint(1, 2))]
    text = " ".join(p for p in parts if p)
    if rng.random() < 0.25:
        text += " " + pick(rng, ("😂", "🙃", ":D", "haha", "lol", "xx"))
    history: list[tuple[str, str]] = []
    if rng.random() < 0.3:
        history.append((pick(rng, ("hey", "hi!", "you there?")), "Hey! I'm here, how are you doing?"))
    return chat(rng, noisy(rng, text), history=history)


SOURCES: tuple[Source, ...] = (make("gen:smalltalk-rambling", "smalltalk", _draw),)
