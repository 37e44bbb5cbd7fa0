"""Shared surface of the plain-words code generators (code_howto.py, code_reports.py, code_changes.py).

Real programming questions arrive with a greeting or an apology in front, a thanks after, in lower case,
with a typo, under a system prompt, or after an earlier exchange; this module adds those so that no code
source is recognisable by its punctuation alone. It defines no source of its own (``SOURCES`` is empty).
"""

from __future__ import annotations

import random

from gateway_training.sources import Messages, Source

__all__ = ["LICENCE", "SOURCES", "surface"]

LICENCE = "Apache-2.0 (this project)"
SOURCES: tuple[Source, ...] = ()

_SYSTEMS = (
    "You are a helpful assistant.",
    "You are a senior engineer helping colleagues on the internal chat.",
    "Answer concisely.",
    "You are a friendly assistant in a developer community's Discord.",
    "You are a coding assistant. Prefer standard libraries.",
)
_LEADS = (
    "hi! ",
    "Quick one: ",
    "Sorry if this is basic. ",
    "Hey, ",
    "Can I pick your brain? ",
    "Work question. ",
    "Been stuck on this all afternoon. ",
)
_CLOSINGS = (" Thanks!", " Any pointers welcome.", " thx", " Cheers.", " Please be specific.")
# An earlier, unrelated exchange: the code request is the newest turn of an ongoing chat.
_EARLIER = (
    ("hey, you around?", "Yes! What can I help with?"),
    ("thanks for the help yesterday", "You're welcome! What's next?"),
    ("I have a programming question", "Sure, go ahead."),
)
# Or the code request came first and the newest turn is a terse follow-up, hard because of what it follows.
_ANSWER = "Here's one way to approach it, step by step, with the trade-offs of each option."
_FOLLOW_UPS = (
    "and with error handling?",
    "can you show the full version?",
    "what about on Windows?",
    "ok now add tests for it",
    "how would that change with async?",
    "does that still work at ten times the load?",
)


def _typo(rng: random.Random, text: str) -> str:
    words = text.split(" ")
    idx = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if not idx:
        return text
    i = idx[rng.randrange(len(idx))]
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def surface(rng: random.Random, text: str) -> Messages:
    """One code request as a user would send it: varied lead-in, closing, casing and conversation shape."""
    if rng.random() < 0.2:
        text = _LEADS[rng.randrange(len(_LEADS))] + text[:1].lower() + text[1:]
    if rng.random() < 0.1:
        text = text.rstrip(".?!") + "?" + _CLOSINGS[rng.randrange(len(_CLOSINGS))]
    roll = rng.random()
    if roll < 0.12:
        text = text.lower()
    elif roll < 0.2:
        text = _typo(rng, text)
    if rng.random() < 0.08:
        text = text.rstrip(".?!")
    messages: Messages = []
    if rng.random() < 0.2:
        messages.append({"role": "system", "content": _SYSTEMS[rng.randrange(len(_SYSTEMS))]})
    shape = rng.random()
    if shape < 0.08:
        said, answered = _EARLIER[rng.randrange(len(_EARLIER))]
        messages += [{"role": "user", "content": said}, {"role": "assistant", "content": answered}]
    elif shape < 0.16:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": _ANSWER}]
        text = _FOLLOW_UPS[rng.randrange(len(_FOLLOW_UPS))]
    messages.append({"role": "user", "content": text})
    return messages
