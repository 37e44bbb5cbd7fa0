"""One non-streaming request of the gateway's own to a backend (a shadow answer, a judge's verdict), and
what came back: the text, why it ended, its tokens and how long the backend worked on it.

These requests are the gateway's, not a client's: they carry no client header, no client's credential
and no limiter lease, count in no circuit breaker, health or spill-over state, and appear in no usage
ledger row. Their cost is counted apart (gateway/shadow/metrics.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.errors import Error
from gateway.upstream import UpstreamClient, UpstreamError
from gateway.upstream.base import auth_headers
from gateway.upstream.settings import BackendSettings

__all__ = ["PATHS", "CallFailed", "Caller", "Reply"]

PATHS = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}


@dataclass(frozen=True, slots=True)
class Reply:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    seconds: float  # from sending the request to reading its last byte

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class CallFailed(Error):
    """The backend could not be reached, failed, or answered something that is not an answer; ``seconds``
    is how long it was busy with the request all the same."""

    def __init__(self, why: str, seconds: float) -> None:
        super().__init__(why)
        self.seconds = seconds


class Caller:
    def __init__(self, upstream: UpstreamClient, clock: Callable[[], float] = time.perf_counter) -> None:
        self._upstream = upstream
        self._clock = clock

    async def ask(self, backend: BackendSettings, endpoint: str, payload: dict[str, Any]) -> Reply:
        """Send ``payload`` (model and stream set here) to ``backend``'s chat or completions API."""
        body = orjson.dumps({**payload, "model": backend.model, "stream": False})
        headers = [
            ("content-type", "application/json"),
            ("x-request-id", "shadow-" + os.urandom(12).hex()),
            *auth_headers(backend),
        ]
        started = self._clock()
        try:
            response = await self._upstream.send(
                backend, PATHS[endpoint], body=body, headers=headers, stream=False
            )
            try:
                data = await response.read()
            finally:
                await response.aclose()
        except UpstreamError as exc:
            raise CallFailed(exc.kind, self._clock() - started) from None
        seconds = self._clock() - started
        if response.status != 200:
            raise CallFailed(f"status_{response.status}", seconds)
        return _reply(data, seconds)


def _reply(data: bytes, seconds: float) -> Reply:
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise CallFailed("not_json", seconds) from None
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise CallFailed("no_choice", seconds)
    choice = choices[0]
    message = choice.get("message")
    text = message.get("content") if isinstance(message, dict) else choice.get("text")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    finish = choice.get("finish_reason")
    return Reply(
        text=text if isinstance(text, str) else "",
        finish_reason=finish if isinstance(finish, str) else None,
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        seconds=seconds,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
