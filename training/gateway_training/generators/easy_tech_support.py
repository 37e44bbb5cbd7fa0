"""Easy: everyday help with devices and apps, which names technology but asks for no code.

A second source of programming-adjacent words on the easy side (beside tech_chat), so that a held-out
one still has counter-examples: "my laptop fan is loud, what can I do?" or "how do I move my WhatsApp
chats to a new phone" belong on the diffusion backend.
"""

from __future__ import annotations

import random

from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_LICENCE = "Apache-2.0 (this project)"

_DEVICES = ["laptop", "iPhone", "Android phone", "router", "printer", "smart TV", "tablet", "Mac", "PC"]
_APPS = ["WhatsApp", "Gmail", "Spotify", "Zoom", "Excel", "Chrome", "Outlook", "Instagram", "Netflix"]
_PROBLEMS = [
    "my {device} is really slow lately, what can I do?",
    "how do I move my {app} data to a new {device}?",
    "my {device}'s battery drains fast. any tips?",
    "the wifi on my {device} keeps dropping. how do I fix it?",
    "how do I turn on dark mode in {app}?",
    "{app} won't open on my {device}, what should I try first?",
    "is it safe to install updates on my {device} right away?",
    "how can I free up storage on my {device}?",
    "what's a good password manager for a family?",
    "how do I share my screen in {app}?",
    "which {device} should I buy for a student on a budget?",
    "my {device} fan is loud, is that normal?",
    "how do I back up photos from my {device}?",
    "can I use {app} without an account?",
    "how do I stop {app} notifications at night?",
    "my printer says offline but it's on. help?",
    "what does it mean when my {device} says storage almost full?",
    "how do I connect my {device} to the TV?",
]
_LEADS = ["", "", "Quick question: ", "Hi! ", "Help please, ", "Not very techy here: "]


def _draw(rng: random.Random) -> Messages:
    text = rng.choice(_PROBLEMS).format(device=rng.choice(_DEVICES), app=rng.choice(_APPS))
    text = rng.choice(_LEADS) + text
    if rng.random() < 0.6:
        text = text[0].upper() + text[1:]
    if rng.random() < 0.2:
        return [
            {"role": "system", "content": "You are a patient tech-support assistant for a phone shop."},
            {"role": "user", "content": text},
        ]
    return [{"role": "user", "content": text}]


SOURCES = (Source("gen:tech-support", "easy", "advice", _LICENCE, _draw),)
