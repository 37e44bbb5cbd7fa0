"""Hard: a change to existing code specified in words: "make the signup handler reject duplicate emails
and answer 409". The imperative shape of a ticket or a chat message to a colleague; the behaviour wanted
is precise, the code is not shown, and it reads like an everyday sentence, which is what the scorer must
still send to the autoregressive backend.
"""

from __future__ import annotations

import random

from gateway_training.generators.code_common import LICENCE, surface
from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_CHANGES = (
    ("the signup endpoint", "reject an email that's already registered and answer with a 409"),
    ("the CSV export", "write dates as ISO 8601 and leave empty cells empty instead of printing None"),
    ("our rate limiter", "let admins through without adding a database call per request"),
    ("the retry logic", "give up after five attempts and log the last error with the request id"),
    ("the image upload", "refuse files over 10 MB before reading the whole body"),
    ("the search box", "wait until the user stops typing for 300 ms before it queries the server"),
    ("the nightly backup script", "keep the last seven copies and delete older ones"),
    ("the order model", "refuse to save an order with a negative quantity"),
    ("the login form", "lock the account for 15 minutes after five wrong passwords"),
    ("the price formatter", "round half-cents the way accountants expect, not the way floats do"),
    ("the webhook handler", "ignore a delivery it has already processed"),
    ("the settings page", "only save the fields the user actually changed"),
    ("the invoice generator", "number invoices per year, starting again at 1 every January"),
    ("the user list", "load 50 at a time as you scroll instead of all at once"),
    ("the config loader", "fail at start-up, with the key's name, when a required value is missing"),
    ("the scheduler", "never run the same job twice at the same time"),
    ("the password reset", "expire its link after one hour and after first use"),
    ("the cache layer", "drop a user's entries when they update their profile"),
)
_VERBS = ("Change", "Update", "Fix", "Rework", "Modify", "Adjust")
_FRAMES = (
    "{verb} {thing} to {does}.",
    "I need {thing} to {does}. How do I change it?",
    "Can you help me make {thing} {does}?",
    "Ticket for today: {thing} should {does}. What's the cleanest way to do it?",
    "{verb} {thing}: it should {does}, and nothing else should change.",
    "We want {thing} to {does}. What would you change in the code?",
)
_CONTEXT = ("It's a {lang} project.", "We use {lang}.", "Backend is {lang}.", "({lang})", "", "", "")
_LANGS = ("Python", "Go", "TypeScript", "Java", "C#", "Ruby", "PHP", "Kotlin", "Rust", "Elixir")
_TAIL = ("Please include the tests.", "Keep it backwards compatible.", "Explain the edge cases.", "", "")


def _change(rng: random.Random) -> Messages:
    thing, does = _CHANGES[rng.randrange(len(_CHANGES))]
    text = _FRAMES[rng.randrange(len(_FRAMES))].format(
        verb=_VERBS[rng.randrange(len(_VERBS))], thing=thing, does=does
    )
    extra = [
        _CONTEXT[rng.randrange(len(_CONTEXT))].format(lang=_LANGS[rng.randrange(len(_LANGS))]),
        _TAIL[rng.randrange(len(_TAIL))],
    ]
    text = " ".join(p for p in (text, *extra) if p)
    return surface(rng, text[0].upper() + text[1:])


SOURCES: tuple[Source, ...] = (Source("gen:code-change", "hard", "code", LICENCE, _change),)
