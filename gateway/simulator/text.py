"""Deterministic text: the same request always gets the same answer, token for token.

A "token" here is one word with its leading space (or a punctuation mark), so token counts in usage are
exact for the text the simulator writes.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

__all__ = ["count_prompt_tokens", "make_rng", "text_of", "tool_arguments", "words"]

_VOCABULARY = tuple(
    (
        "the a of to and in is it that for on with as was by this be are from at or an have not they "
        "which one you were all we when there can been has more if will each about how up out them then "
        "she many some so these would other into time two like him see could way people than first water "
        "been call who now find long down day did get come made may part over new sound take only little "
        "work know place year live back give most very after thing just name good sentence man think say "
        "great where help through much before line right too mean old any same tell boy follow came want "
        "show also around form three small set put end does another well large must big even such "
        "because turn here why ask went men read need land different home us move try kind hand picture "
        "again change off play spell air away animal house point page letter mother answer found study "
        "still learn should world"
    ).split()
)


def make_rng(*parts: object) -> random.Random:
    material = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    return random.Random(int.from_bytes(hashlib.sha256(material).digest()[:8], "big"))


def words(rng: random.Random, count: int) -> list[str]:
    """``count`` tokens of plain prose: words with leading spaces, a full stop every few words."""
    out: list[str] = []
    capital = True
    while len(out) < count:
        if not capital and len(out) + 1 < count and rng.random() < 0.12:
            out.append(".")
            capital = True
            continue
        word = rng.choice(_VOCABULARY)
        if capital:
            word = word.capitalize()
            capital = False
        out.append(word if not out else " " + word)
    return out


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def count_prompt_tokens(payload: dict[str, Any]) -> int:
    """Words in the prompt plus a few tokens of chat-template overhead per message."""
    if "messages" in payload and isinstance(payload["messages"], list):
        total = 0
        for message in payload["messages"]:
            if isinstance(message, dict):
                total += 4 + len(text_of(message.get("content")).split())
        return total + 2
    prompt = payload.get("prompt")
    if isinstance(prompt, list):
        return sum(len(str(p).split()) for p in prompt) or 1
    return len(str(prompt).split()) or 1


def tool_arguments(schema: Any, rng: random.Random) -> dict[str, Any]:
    """Arguments that satisfy a JSON schema's required properties, with deterministic values."""
    if not isinstance(schema, dict):
        return {}
    raw_properties = schema.get("properties")
    properties: dict[str, Any] = raw_properties if isinstance(raw_properties, dict) else {}
    raw_required = schema.get("required")
    required: list[Any] = raw_required if isinstance(raw_required, list) else list(properties)
    args: dict[str, Any] = {}
    for name in required:
        spec = properties.get(name, {})
        args[str(name)] = _value_for(spec if isinstance(spec, dict) else {}, rng)
    return args


def _value_for(spec: dict[str, Any], rng: random.Random) -> Any:
    if isinstance(spec.get("enum"), list) and spec["enum"]:
        return spec["enum"][0]
    kind = spec.get("type")
    if kind == "integer":
        return rng.randint(1, 100)
    if kind == "number":
        return round(rng.uniform(1, 100), 2)
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return tool_arguments(spec, rng)
    return rng.choice(_VOCABULARY)
