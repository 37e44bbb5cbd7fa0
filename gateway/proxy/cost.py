"""What a request may spend, known before it is sent, and what an answer cut short is charged.

The limiter reserves a request's prompt estimate plus ``max_tokens`` for every sequence it asks for
(gateway/limits/tokens.py). When an answer ends before the backend's usage came (a client that hung up,
a stream the backend broke off or that carried no usage), the request is charged its prompt (the
backend's count when an event carried one, else this estimate) and the completion relayed so far, and
its usage is marked as an estimate (``usage_estimated`` in the request log).

The estimate reads the request's chat view (gateway.chat_view): a token per four bytes of UTF-8 text
(about what the backends' tokenizers give for English and code, more than they give for scripts of
three-byte characters), a few tokens of chat template per message, a token per id of a pre-tokenized
prompt, and a flat count for each inline image, audio or file part (its bytes say little about its tokens).
"""

from __future__ import annotations

from typing import Any

from gateway.proxy.body import ProxiedRequest
from gateway.proxy.dialects import OUTPUT_LIMITS
from gateway.record import RequestRecord, Usage

__all__ = ["RequestCost", "charge_cut_short", "estimate_prompt_tokens"]

_PER_MESSAGE = 4  # a turn's role and its start and end markers in the chat template
_PER_PROMPT = 3  # the template's start, and the assistant turn it opens for the answer
_MEDIA_TOKENS = 256  # an image, audio clip or file given inline or by URL
# Keys whose value is media, not text: chat's image_url/input_audio/video_url parts, Responses'
# input_image/input_file, Anthropic's image/document ``source``.
_MEDIA_KEYS = frozenset({"image_url", "input_audio", "video_url", "audio_url", "file", "file_data", "source"})


class RequestCost:
    """The :class:`gateway.limits.limiter.Cost` of a parsed request; the prompt is estimated on first use
    only (a principal without token limits never needs it unless its answer is cut short)."""

    __slots__ = ("_parsed", "_prompt", "max_tokens", "sequences")

    def __init__(self, parsed: ProxiedRequest) -> None:
        payload = parsed.payload
        self._parsed = parsed
        self._prompt: int | None = None
        # The largest of the output limits the request sets: whichever one the backend honours, the
        # answer stays within it.
        limits = [
            value
            for name in OUTPUT_LIMITS[parsed.endpoint]
            if isinstance(value := payload.get(name), int) and not isinstance(value, bool)
        ]
        self.max_tokens: int | None = max(limits) if limits else None
        n = payload.get("n")
        choices = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1
        self.sequences = choices * _prompts(payload) if parsed.endpoint == "completions" else choices

    @property
    def prompt(self) -> int:
        if self._prompt is None:
            self._prompt = estimate_prompt_tokens(self._parsed.view)
        return self._prompt

    @property
    def completion_cap(self) -> int | None:
        return self.max_tokens * self.sequences if self.max_tokens is not None else None


def _prompts(payload: dict[str, Any]) -> int:
    """How many prompts a completions request holds: a list of strings or of token lists is a batch."""
    prompt = payload.get("prompt")
    if isinstance(prompt, list) and prompt and all(isinstance(p, str | list) for p in prompt):
        return len(prompt)
    return 1


def estimate_prompt_tokens(view: dict[str, Any]) -> int:
    """The gateway's estimate of a request's prompt tokens, from its chat view (see the module's text)."""
    messages = view.get("messages")
    tokens = _PER_PROMPT + (_PER_MESSAGE * len(messages) if isinstance(messages, list) else 0)
    text = 0
    # A stack, not recursion: a body nested deeper than Python's recursion limit is still valid JSON.
    stack: list[Any] = [messages, view.get("prompt"), view.get("tools")]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            text += len(item) if item.isascii() else len(item.encode("utf-8", "replace"))
        elif isinstance(item, dict):
            for key, value in item.items():
                if key in _MEDIA_KEYS and isinstance(value, str | dict):
                    tokens += _MEDIA_TOKENS
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            tokens += 1  # a token id of a pre-tokenized prompt
    return tokens + -(-text // 4)


def charge_cut_short(record: RequestRecord, cost: RequestCost | None) -> None:
    """The usage of an answer that ended before the backend's count of it: the prompt (the backend's
    count when an event carried it, else the gateway's estimate) and the completion relayed so far, one
    token per event after the first (vLLM streams a token per event) or a whole canvas per event for
    diffusion (what the backend computed, docs/operations.md, Metrics), at most what the request asked for."""
    usage = record.usage
    events = max(0, record.relayed_events - 1)  # the first event carries the role, no token
    run = record.diffusion
    relayed = events * run.canvas_length if run is not None else events
    cap = cost.completion_cap if cost is not None else None
    if cap is not None:
        relayed = min(relayed, cap)
    if usage is not None and usage.prompt_tokens > 0 and usage.completion_tokens >= relayed:
        return  # the backend's count arrived after all
    prompt = usage.prompt_tokens if usage is not None else 0
    if prompt == 0 and cost is not None:
        prompt = cost.prompt
    completion = max(relayed, usage.completion_tokens if usage is not None else 0)
    record.usage = Usage(prompt, completion, usage.reasoning_tokens if usage is not None else 0)
    record.usage_estimated = True
