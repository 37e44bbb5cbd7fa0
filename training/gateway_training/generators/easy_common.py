"""Shared pieces of the "easy" prompt generators: surface noise, system prompts, conversation shapes.

This module defines no source of its own (``SOURCES`` is empty); the ``easy_*`` family modules use it so
that every family varies its surface the same way and no family is recognisable by its punctuation alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from gateway_training.sources import Messages, Source

__all__ = ["LICENCE", "SOURCES", "aside", "chat", "make", "noisy", "pick"]

LICENCE = "Apache-2.0 (this project)"
SOURCES: tuple[Source, ...] = ()

SYSTEM_EN = (
    "You are a helpful assistant.",
    "You are a friendly Telegram bot. Keep answers short.",
    "You are a concise assistant. Answer in plain language.",
    "You are a cheerful chat companion in a Discord server.",
    "You are an assistant for a small family business. Be polite.",
    "Answer briefly and kindly.",
    "You are a helpful assistant. Today's date is 2025-03-14.",
    "You are Milo, the assistant of a neighbourhood community app.",
)
SYSTEM_BY_LANG = {
    "en": SYSTEM_EN,
    "de": ("Du bist ein hilfsbereiter Assistent.", "Du bist ein freundlicher Telegram-Bot. Antworte kurz."),
    "fr": ("Tu es un assistant serviable.", "Tu es un bot Telegram sympathique. Réponds brièvement."),
    "es": ("Eres un asistente útil.", "Eres un bot de Telegram amable. Responde en pocas palabras."),
    "it": ("Sei un assistente disponibile.",),
    "pt": ("Você é um assistente prestativo.",),
}
_PREFIX = {
    "en": ("hey, ", "Hi! ", "quick question: ", "hello, ", "Sorry to bother you, ", "ok so ", "Hey bot, "),
    "de": ("Hallo, ", "Hey, ", "kurze Frage: ", "Moin! "),
    "fr": ("Salut, ", "Bonjour ! ", "petite question : ", "Coucou, "),
    "es": ("Hola, ", "Oye, ", "una pregunta: ", "¡Buenas! "),
    "it": ("Ciao, ", "Scusa, "),
    "pt": ("Olá, ", "Oi, "),
}
_SUFFIX = {
    "en": (" thanks!", " pls", " :)", " Thank you.", " thx", " Cheers."),
    "de": (" Danke!", " bitte", " :)"),
    "fr": (" Merci !", " stp", " :)"),
    "es": (" ¡Gracias!", " porfa", " :)"),
    "it": (" Grazie!",),
    "pt": (" Obrigado!",),
}

_ASIDES = {
    "en": (
        "Asking for a friend. ",
        "I'm a total beginner. ",
        "Context: I live in a small flat in {city}. ",
        "We're a family of {n}. ",
        "I'm a student on a tight budget. ",
        "My partner and I were wondering: ",
        "Random question: ",
        "I'm {age}, if that matters. ",
        "First time doing this. ",
        "I'm in {city} this week. ",
        "My {rel} asked me and I didn't know. ",
    ),
    "de": (
        "Kurze Frage: ",
        "Ich wohne in {city}. ",
        "Wir sind eine Familie mit {n} Personen. ",
        "Ich bin Anfänger. ",
        "Ich bin {age} Jahre alt. ",
        "Mein Mitbewohner fragt: ",
    ),
    "fr": (
        "Petite question : ",
        "Pour un quiz : ",
        "Mon fils m'a demandé : ",
        "Pour un exposé : ",
        "J'habite à {city}. ",
        "Je suis débutant. ",
        "Question bête : ",
    ),
    "es": (
        "Una duda: ",
        "Vivo en {city}. ",
        "Somos una familia de {n}. ",
        "Soy estudiante y voy justo de dinero. ",
        "Tengo {age} años. ",
        "Pregunta rápida: ",
    ),
    "it": ("Domanda veloce: ", "Per un quiz: ", "Mio figlio mi ha chiesto: ", "Per la scuola: "),
    "pt": ("Pergunta rápida: ", "Para um trabalho da escola: ", "Meu filho perguntou: ", "Para um quiz: "),
}
# Context for a writing request: about the text wanted, not about the writer's life.
_WRITING_ASIDES = {
    "en": (
        "It's for work. ",
        "Keep it light. ",
        "Nothing too long. ",
        "It's a bit urgent. ",
        "English isn't my first language, so please help. ",
        "I'm terrible at this. ",
        "Something warm but not cheesy. ",
    ),
    "fr": (
        "C'est pour le travail. ",
        "Ton léger svp. ",
        "Pas trop long. ",
        "C'est un peu urgent. ",
        "Je ne suis pas doué pour écrire. ",
    ),
}
_ASIDE_CITIES = (
    "Leeds",
    "Lyon",
    "Porto",
    "Graz",
    "Cork",
    "Bologna",
    "Denver",
    "Utrecht",
    "Seville",
    "Hamburg",
)
_ASIDE_RELS = ("kid", "mum", "boss", "flatmate", "grandad", "niece")

T = TypeVar("T")


def aside(rng: random.Random, lang: str = "en", rate: float = 0.3, writing: bool = False) -> str:
    """A bit of context people put before their request ("" most of the time)."""
    if rng.random() >= rate:
        return ""
    return pick(rng, (_WRITING_ASIDES if writing else _ASIDES)[lang]).format(
        city=pick(rng, _ASIDE_CITIES),
        n=rng.randint(3, 6),
        age=rng.randint(16, 80),
        rel=pick(rng, _ASIDE_RELS),
    )


def pick(rng: random.Random, items: Sequence[T]) -> T:
    return items[rng.randrange(len(items))]


def _typo(rng: random.Random, text: str) -> str:
    words = text.split(" ")
    long_words = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if not long_words:
        return text
    i = pick(rng, long_words)
    word = words[i]
    k = rng.randrange(len(word) - 1)
    words[i] = word[:k] + word[k + 1] + word[k] + word[k + 2 :]
    return " ".join(words)


def noisy(rng: random.Random, text: str, lang: str = "en") -> str:
    """The surface noise real users add: a greeting, a sign-off, lower case, a missing full stop, a typo.

    Only applied to the short request part of a prompt, never to a long pasted text, whose shape is its own.
    """
    if rng.random() < 0.12:
        text = pick(rng, _PREFIX[lang]) + text[:1].lower() + text[1:]
    if rng.random() < 0.08:
        text = text.rstrip(".!?") + pick(rng, _SUFFIX[lang])
    if rng.random() < 0.10:
        text = text.lower()
    if rng.random() < 0.10 and text[-1:] in ".?!":
        text = text[:-1]
    if rng.random() < 0.06:
        text = _typo(rng, text)
    return text


def chat(
    rng: random.Random,
    user: str,
    *,
    lang: str = "en",
    system_rate: float = 0.2,
    system: str | None = None,
    history: Sequence[tuple[str, str]] = (),
) -> Messages:
    """One conversation: an optional system prompt, earlier (user, assistant) turns, the newest user turn."""
    messages: Messages = []
    if system is not None:
        messages.append({"role": "system", "content": system})
    elif rng.random() < system_rate:
        messages.append({"role": "system", "content": pick(rng, SYSTEM_BY_LANG[lang])})
    for said, answered in history:
        messages.append({"role": "user", "content": said})
        messages.append({"role": "assistant", "content": answered})
    messages.append({"role": "user", "content": user})
    return messages


def make(name: str, category: str, draw: Callable[[random.Random], Messages]) -> Source:
    return Source(name=name, label="easy", category=category, licence=LICENCE, draw=draw)
