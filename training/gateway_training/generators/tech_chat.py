"""Everyday talk about technology that asks for no code: the easy side of the programming vocabulary.

Without it, any mention of a language or a framework would read as hard: "is Rust hard to learn?",
"a tweet announcing our app's launch", "what does API stand for" belong on the diffusion backend.
"""

from __future__ import annotations

import random

from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_LICENCE = "Apache-2.0 (this project)"
_LANGS = ["Python", "JavaScript", "Rust", "Go", "Java", "Swift", "Kotlin", "C#", "TypeScript", "Ruby"]
_TERMS = [
    "API",
    "JSON",
    "Docker",
    "Kubernetes",
    "a database",
    "the cloud",
    "Git",
    "an IDE",
    "open source",
    "CI",
]
_PRODUCTS = ["our new app", "my open-source library", "the team's website", "our developer newsletter"]
_ASKS = [
    "Is {lang} hard to learn?",
    "What does {term} mean, in one sentence?",
    "Which is more popular, {lang} or {lang2}?",
    "Recommend a good book to start learning {lang}.",
    "Write a tweet announcing {product}.",
    "Suggest a name for {product}.",
    "What laptop would you recommend for {lang} development on a budget?",
    "Explain {term} to my grandmother.",
    "Which programming language should my 12-year-old learn first?",
    "Give me three ideas for a hackathon project.",
    "Write a short bio for my developer portfolio.",
    "Is it worth learning {lang} in 2026?",
    "Summarise what {term} is in two lines.",
    "how long does it take to learn {lang} roughly",
    "Draft a LinkedIn post about finishing my {lang} course.",
    "What's the difference between a programmer and a software engineer?",
    "Any tips for my first week as a junior {lang} developer?",
    "Tell me a programming joke.",
]


def _draw(rng: random.Random) -> Messages:
    lang, lang2 = rng.sample(_LANGS, 2)
    text = rng.choice(_ASKS).format(
        lang=lang, lang2=lang2, term=rng.choice(_TERMS), product=rng.choice(_PRODUCTS)
    )
    if rng.random() < 0.2:
        text = text.lower()
    if rng.random() < 0.15:
        return [
            {"role": "system", "content": "You are a friendly assistant."},
            {"role": "user", "content": text},
        ]
    return [{"role": "user", "content": text}]


SOURCES = (Source("gen:tech-chat", "easy", "smalltalk", _LICENCE, _draw),)
