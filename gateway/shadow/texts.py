"""A sampled request's text, as the judge reads it and as a stored sample keeps it, and the body of the
shadow request that asks the other backend the same thing."""

from __future__ import annotations

from typing import Any

__all__ = ["kept_request", "rendered", "shadow_payload"]

# Fields a shadow request leaves out: it is the gateway's own, non-streaming, with its own limit.
_DROPPED = ("stream", "stream_options", "max_tokens", "max_completion_tokens", "n")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def rendered(payload: dict[str, Any], endpoint: str, limit: int) -> str:
    """The request as text: ``role: text`` per message (a completions prompt as it is), at most ``limit``
    characters, its end kept (the newest turn is what the answers answer)."""
    if endpoint == "completions":
        prompt = payload.get("prompt")
        text = prompt if isinstance(prompt, str) else "\n".join(str(p) for p in prompt or ())
    else:
        messages = payload.get("messages")
        turns = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
        text = "\n\n".join(f"{m.get('role', 'user')}: {_text(m.get('content'))}" for m in turns)
    return text[-limit:]


def kept_request(payload: dict[str, Any], endpoint: str, limit: int) -> dict[str, Any]:
    """What a stored sample keeps of the request, in the training data's shape: ``{"messages": [...]}``
    (each message's role and text, the text cut to ``limit`` characters) or ``{"prompt": ...}``."""
    if endpoint == "completions":
        return {"prompt": rendered(payload, endpoint, limit)}
    messages = payload.get("messages")
    turns = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    return {
        "messages": [
            {"role": str(m.get("role") or "user"), "content": _text(m.get("content"))[:limit]} for m in turns
        ]
    }


def shadow_payload(payload: dict[str, Any], limit: int, to_diffusion: bool) -> dict[str, Any]:
    """The request as the other backend is asked it: the same body, non-streaming, one answer, held to
    ``limit`` tokens; for a diffusion backend without a temperature other than 1 (as the router adapts a
    request it sends there; the requests it would refuse are never shadowed)."""
    body = {k: v for k, v in payload.items() if k not in _DROPPED}
    body["max_tokens"] = limit
    if to_diffusion and body.get("temperature") not in (None, 1, 1.0):
        body.pop("temperature")
    return body
