"""Checks on a diffusion answer that, when one fails, send the request to the autoregressive backend.

They target what the gemma4 parser is reported to produce on diffusion output (docs/backends.md): raw
template markup (``<|channel>``, ``<|tool_call>`` and their closing forms) in the content or the
reasoning, tool-call arguments that are not JSON or lack a required parameter, a ``tool_choice`` that
the parser does not enforce, and empty turns; and one more, ``repetition``, for an answer that loops (a
long text whose word 4-grams are mostly the same few). ``check_answer`` returns the name of the first
check that fails, or None; each can be switched off in ``routing.quality``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.routing.features import tool_choice_forced
from gateway.routing.settings import QualitySettings

__all__ = ["TEMPLATE_MARKUP", "Answer", "check_answer"]

TEMPLATE_MARKUP = ("<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>")


@dataclass(slots=True)
class Answer:
    """What a backend answered so far (a whole answer, or the part held back from a stream)."""

    content: str = ""
    reasoning: str = ""
    # (name, arguments) as received; arguments are the raw JSON text.
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    finished: bool = False

    @classmethod
    def from_message(cls, message: dict[str, Any], finished: bool = True) -> Answer:
        calls = []
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                calls.append((str(function.get("name") or ""), str(function.get("arguments") or "")))
        return cls(
            content=message.get("content") or "" if isinstance(message.get("content"), str | None) else "",
            reasoning=str(message.get("reasoning") or message.get("reasoning_content") or ""),
            tool_calls=calls,
            finished=finished,
        )


def check_answer(answer: Answer, payload: dict[str, Any], settings: QualitySettings) -> str | None:
    if settings.markup and _has_markup(answer):
        return "markup"
    if settings.tool_json and answer.finished and (bad := _bad_tool_call(answer, payload)) is not None:
        return bad
    if (
        settings.tool_required
        and answer.finished
        and tool_choice_forced(payload.get("tool_choice"))
        and not answer.tool_calls
    ):
        return "tool_required"
    if settings.empty and answer.finished and not answer.content.strip() and not answer.tool_calls:
        return "empty"
    if settings.repetition and _repetitive(answer.content):
        return "repetition"
    return None


def _has_markup(answer: Answer) -> bool:
    return any(m in answer.content or m in answer.reasoning for m in TEMPLATE_MARKUP)


def _schemas(payload: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tool in payload.get("tools") or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out[function["name"]] = function.get("parameters")
    return out


def _bad_tool_call(answer: Answer, payload: dict[str, Any]) -> str | None:
    if not answer.tool_calls:
        return None
    schemas = _schemas(payload)
    for name, arguments in answer.tool_calls:
        try:
            args = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError:
            return "tool_json"
        if not isinstance(args, dict):
            return "tool_json"
        schema = schemas.get(name)
        required = schema.get("required") if isinstance(schema, dict) else None
        if isinstance(required, list) and any(r not in args for r in required):
            return "tool_json"
    return None


def _repetitive(text: str, *, min_words: int = 40, max_unique_ratio: float = 0.25) -> bool:
    """A long text whose word 4-grams are mostly the same few: the model is looping."""
    words = text.split()
    if len(words) < min_words:
        return False
    grams = [tuple(words[i : i + 4]) for i in range(len(words) - 3)]
    return len(set(grams)) / len(grams) < max_unique_ratio
