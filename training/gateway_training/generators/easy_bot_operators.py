"""Easy: what people say to a bot that an operator set up with a long system prompt of rules.

The system prompts that operators write for a shop's, a club's or a class's bot are long and full of
instructions ("Never discuss prices. If someone is rude, stay calm. Answer in at most two sentences."),
which is how a hard task stated in a system prompt looks too. What the users then send is chat: a
greeting, thanks, a joke, a reaction, a question about the bot's tastes. ``easy_smalltalk.py`` writes a
role-play persona in one or two sentences; this is a second hand: rule lists, a business or a group
behind the bot, several turns, and turns that are only an emoji or a sticker's text, so that a persona
prompt does not make short replies such as "thanks Sir Reginald" score hard.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import chat, make, noisy, pick
from gateway_training.sources import Messages, Source

__all__ = ["SOURCES", "operator_prompt"]

_WHO = (
    ("Pip", "the Bean There café in Leeds"),
    ("Olive", "Greenfingers garden centre"),
    ("Max", "the Riverside climbing gym"),
    ("Luna", "a yoga studio in Lisbon"),
    ("Bruno", "the Saturday five-a-side football group"),
    ("Sunny", "Maple Street primary school's parents' group"),
    ("Chef Tomo", "a ramen bar's loyalty club"),
    ("Bookworm", "the Hillside book club"),
    ("Nova", "an English conversation class for adults"),
    ("Dash", "a bike repair shop"),
    ("Paws", "a dog-walking service"),
    ("Clara", "a hair salon in Dublin"),
)
_OPENING = (
    "You are {bot}, the assistant of {place}.",
    "Your name is {bot}. You talk to customers of {place} on Telegram.",
    "Act as {bot}, a friendly bot for {place}.",
    "You are {bot}. You run the WhatsApp group chat of {place}.",
    "System: you are {bot}, the chat helper for {place}.",
)
_RULES = (
    "Keep every answer under three sentences.",
    "Never discuss politics or religion.",
    "If someone is rude, stay calm and polite.",
    "Do not make up prices; send people to the website for them.",
    "Use at most one emoji per message.",
    "Reply in the language the user writes in.",
    "Never share members' phone numbers.",
    "If you do not know something, say so and suggest calling the front desk.",
    "Be warm and a little playful, never sarcastic.",
    "Do not give medical advice.",
    "Always sign off with a short wish for the day.",
    "Address people by their first name when you know it.",
    "Avoid long lists; talk like a person.",
    "If asked who made you, say the team at {place}.",
)
_TURNS = (
    "hi!",
    "hello {bot}",
    "good morning 🌞",
    "thanks {bot}, you're the best",
    "haha nice one",
    "lol",
    "👍",
    "❤️❤️",
    "ok cool",
    "tell me a joke",
    "another one!",
    "how are you today?",
    "what's your favourite colour?",
    "do you ever get bored?",
    "are you a real person?",
    "who made you?",
    "I'm having a rough day tbh",
    "you made me smile, thank you",
    "see you next week!",
    "good night {bot}",
    "what should I call you?",
    "can you say hi to my daughter? her name is {name}",
    "it's my birthday today 🎉",
    "I finally passed my driving test!",
    "say something nice",
    "bye for now",
    "is it sunny where you are?",
    "do you like dogs or cats more?",
    "I love this place honestly",
    "you're funny",
    "congrats to everyone who came on Sunday!",
    "welcome {name}, glad you joined!",
    "anyone up for coffee after?",
    "sorry I missed last time, I was ill",
    "happy Friday everyone",
    "what's new?",
    "can you cheer me up a bit?",
    "write me a short good-morning message for the group",
    "give me a fun fact",
    "thank you so much!!",
)
_REPLIES = (
    "Hi there! Lovely to hear from you 😊",
    "Ha, glad that made you smile!",
    "Aw, thank you! Have a great day.",
    "Sorry to hear that. I hope the rest of your day is kinder.",
    "Happy birthday! 🎂",
    "Welcome! We're glad you're here.",
)
_NAMES = ("Mia", "Sam", "Aisha", "Leo", "Hana", "Jonas", "Rosa", "Kwame")


def _system(rng: random.Random, bot: str, place: str) -> str:
    rules = rng.sample(_RULES, rng.randint(2, 6))
    layout = rng.random()
    if layout < 0.4:
        body = " ".join(rules)
    elif layout < 0.8:
        body = "Rules:\n" + "\n".join(f"- {r}" for r in rules)
    else:
        body = "\n".join(f"{i}. {r}" for i, r in enumerate(rules, 1))
    return (pick(rng, _OPENING) + ("\n" if layout >= 0.4 else " ") + body).format(bot=bot, place=place)


def operator_prompt(rng: random.Random) -> str:
    """A system prompt as an operator writes one for a shop's, a club's or a class's bot (a list of
    rules); hard_context.py asks hard problems under them."""
    bot, place = pick(rng, _WHO)
    return _system(rng, bot, place)


def _draw(rng: random.Random) -> Messages:
    bot, place = pick(rng, _WHO)

    def turn() -> str:
        return pick(rng, _TURNS).format(bot=bot, name=pick(rng, _NAMES))

    history = [(turn(), pick(rng, _REPLIES)) for _ in range(rng.choice((0, 0, 1, 2)))]
    return chat(rng, noisy(rng, turn()), system=_system(rng, bot, place), history=history)


SOURCES: tuple[Source, ...] = (make("gen:bot-operators", "smalltalk", _draw),)
