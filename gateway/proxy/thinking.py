"""Thinking control: a principal's default for ``chat_template_kwargs.enable_thinking``, and reasoning
text stripped from answers for clients that cannot show it.

Thinking left on by a server default slows every short turn (and on the diffusion model fills canvases
with reasoning); the principal's policy decides it unless it lets the request choose. Reasoning tokens
are counted either way (usage and ``gateway_tokens_total{type="reasoning"}``), so a short visible answer
that cost many hidden tokens shows up.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.auth.principal import Principal

__all__ = ["apply_thinking", "strip_reasoning_body", "strip_reasoning_event"]

_REASONING_KEYS = ("reasoning", "reasoning_content")


def apply_thinking(payload: dict[str, Any], principal: Principal, endpoint: str = "chat") -> None:
    """Set the principal's thinking default on a chat or Responses request."""
    if principal.thinking is None:
        return
    kwargs = payload.get("chat_template_kwargs")
    asked = kwargs.get("enable_thinking") if isinstance(kwargs, dict) else None
    reasoning = payload.get("reasoning") if endpoint == "responses" else None
    # A Responses request chooses with reasoning.effort too (vLLM turns it into enable_thinking).
    effort_asked = isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str)
    if (isinstance(asked, bool) or effort_asked) and principal.thinking_override:
        return  # the request chose, and may
    merged = dict(kwargs) if isinstance(kwargs, dict) else {}
    merged["enable_thinking"] = principal.thinking
    payload["chat_template_kwargs"] = merged


def _strip(container: Any) -> bool:
    changed = False
    if isinstance(container, dict):
        for key in _REASONING_KEYS:
            if key in container:
                del container[key]
                changed = True
    return changed


def strip_reasoning_body(data: bytes) -> bytes:
    """A non-streaming answer without reasoning text (bytes untouched when there is none)."""
    if b'"reasoning' not in data:
        return data
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        return data
    changed = False
    for choice in body.get("choices") or () if isinstance(body, dict) else ():
        if isinstance(choice, dict):
            changed |= _strip(choice.get("message"))
    return orjson.dumps(body) if changed else data


def strip_reasoning_event(event: bytes) -> bytes:
    """One SSE event without reasoning deltas (bytes untouched when there is none)."""
    if b'"reasoning' not in event or not event.startswith(b"data:"):
        return event
    try:
        chunk = orjson.loads(event[5:].strip())
    except orjson.JSONDecodeError:
        return event
    changed = False
    for choice in chunk.get("choices") or () if isinstance(chunk, dict) else ():
        if isinstance(choice, dict):
            changed |= _strip(choice.get("delta"))
    return b"data: " + orjson.dumps(chunk) + b"\n\n" if changed else event
