"""Shared pieces of the hard-prompt generators: word lists, number words, surface-form variation.

The hard families (hard_*.py) write a problem's body; this module varies how it is asked (lead-ins,
closings, casing, the odd typo), adds a system prompt to about a fifth of the examples, and turns some
into a short conversation whose newest turn is a terse follow-up. Those follow-ups are hard only because
the conversation is, which is what the scorer's history features must learn.

It defines no source of its own (``SOURCES`` is empty) so that a loader globbing ``hard_*.py`` finds it
harmless.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

from gateway_training.sources import Source

__all__ = [
    "LICENCE",
    "NAMES",
    "SOURCES",
    "SYSTEM_PROMPTS",
    "Messages",
    "ask",
    "conversation",
    "maybe_words",
    "number_word",
    "pick",
    "sample",
    "strip_ask",
]

T = TypeVar("T")
Messages = list[dict[str, Any]]
LICENCE = "Apache-2.0 (this project)"
SOURCES: tuple[Source, ...] = ()

NAMES = (
    "Alice", "Bob", "Claire", "Dev", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kemi", "Lars",
    "Maya", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Victor", "Wen", "Ximena",
    "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Diego", "Emeka", "Fatima", "Gus", "Hana", "Ivan", "Jade",
    "Kofi", "Leila", "Marco", "Nora", "Omar", "Priya", "Rafael", "Sara", "Tomas", "Ursula", "Vera", "Will",
    "Yara", "Zain", "Aiko", "Ben", "Carmen", "Dmitri", "Esther", "Felix", "Gemma", "Hugo", "Isla", "Joel",
)  # fmt: skip

_UNITS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
)  # fmt: skip
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

SYSTEM_PROMPTS = (
    "You are a helpful assistant.",
    "You are a helpful assistant. Answer carefully.",
    "You are a patient tutor. Explain each step before giving the final answer.",
    "Think step by step and check your answer before replying.",
    "You are a concise assistant. Keep answers short.",
    "You are an assistant for a puzzle club newsletter.",
    "Answer in the language the user writes in.",
    "You are a friendly assistant in a study-help app for university students.",
    "Be precise. If the question is ambiguous, say which reading you chose.",
    "You are ChatBot, a general-purpose assistant.",
)

_LEADS = (
    "", "", "", "", "Quick one: ", "Can you help me with this? ", "I'm stuck on this. ", "Puzzle: ",
    "Here's a question from my homework. ", "My friend asked me this and I can't work it out. ",
    "Try this: ", "hey, ", "Please solve: ", "I need help with a problem. ", "Question: ",
    "I'm preparing a quiz for my students and want to be sure of the answer before I hand it out. ",
    "We argued about this at dinner last night and nobody agrees, so settle it please. ",
    "This came up in a job interview and I froze. ", "Teacher here, checking an answer key. ",
    "can u solve this ", "I need the answer for a report due in an hour. ", "Riddle from a puzzle book: ",
)  # fmt: skip

_CLOSINGS = (
    "", "", "", " Explain your reasoning.", " Show your steps.", " Just the answer, please.",
    " Walk me through it.", " Please double-check.", " How did you get it?", " Thanks!",
    " Keep it brief.", " I'd like the reasoning, not only the result.",
)  # fmt: skip


def pick(rng: random.Random, seq: Sequence[T]) -> T:
    return seq[rng.randrange(len(seq))]


def sample(rng: random.Random, seq: Sequence[T], k: int) -> list[T]:
    return rng.sample(list(seq), k)


def number_word(n: int) -> str:
    """English words for 0..999 ("forty-two"); digits beyond that."""
    if n < 0 or n > 999:
        return str(n)
    if n < 20:
        return _UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return _TENS[tens] + ("-" + _UNITS[unit] if unit else "")
    hundreds, rest = divmod(n, 100)
    head = _UNITS[hundreds] + " hundred"
    return head + (" and " + number_word(rest) if rest else "")


def maybe_words(rng: random.Random, n: int, p: float = 0.4) -> str:
    """A number as digits or, with probability p, as words: hard prompts must not hinge on digits."""
    return number_word(n) if n <= 999 and rng.random() < p else str(n)


def _typo(rng: random.Random, text: str) -> str:
    words = text.split(" ")
    idx = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if not idx:
        return text
    i = pick(rng, idx)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def ask(rng: random.Random, body: str, *, closings: Sequence[str] = _CLOSINGS, lead: bool = True) -> str:
    """Varies the surface of one English prompt: a lead-in, a closing, sometimes lowercase or a typo."""
    # Half the prompts start straight with the problem; the rest with one of the lead-ins.
    text = (pick(rng, _LEADS) if lead and rng.random() < 0.5 else "") + body + pick(rng, closings)
    roll = rng.random()
    if roll < 0.08:
        text = text.lower()
    elif roll < 0.14:
        text = _typo(rng, text)
    return text.strip()


def strip_ask(text: str) -> str:
    """The problem without the lead-in and closing ``ask`` added (for quoting it inside another frame)."""
    for lead in sorted(set(_LEADS), key=lambda s: (-len(s), s)):
        if lead and text.lower().startswith(lead.lower()):
            text = text[len(lead) :]
            break
    for closing in sorted(set(_CLOSINGS), key=lambda s: (-len(s), s)):
        if closing and text.lower().endswith(closing.lower()):
            text = text[: -len(closing)]
            break
    return text.strip()


def conversation(
    rng: random.Random,
    prompt: str,
    *,
    answer: str | None = None,
    followups: Sequence[str] = (),
    p_system: float = 0.2,
    p_followup: float = 0.15,
    systems: Sequence[str] = SYSTEM_PROMPTS,
) -> Messages:
    """One user turn, or (with probability p_followup, when the family gave an answer and follow-ups)
    the hard turn, the assistant's answer and a terse follow-up; a system prompt with probability p_system.
    """
    messages: Messages = []
    if rng.random() < p_system:
        messages.append({"role": "system", "content": pick(rng, systems)})
    if answer is not None and followups and rng.random() < p_followup:
        messages.append({"role": "user", "content": prompt})
        messages.append({"role": "assistant", "content": answer})
        messages.append({"role": "user", "content": pick(rng, followups)})
    else:
        messages.append({"role": "user", "content": prompt})
    return messages
