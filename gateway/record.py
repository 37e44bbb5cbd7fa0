"""The per-request record that the proxy fills in and the telemetry middleware reports once, at the end,
and the token usage in it.

A leaf module, like ``gateway.errors`` and ``gateway.wire``: the proxy writes these types, telemetry, limits
and the usage ledger read them, so it imports nothing from the package and none of those layers depends on
another through it (pyproject.toml, ``[tool.importlinter]``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DiffusionRun", "RequestRecord", "Usage"]


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def from_json(cls, usage: Any) -> Usage | None:
        if not isinstance(usage, dict):
            return None
        # Chat and completions name them prompt/completion; the Responses and Anthropic Messages APIs
        # input/output.
        details = usage.get("completion_tokens_details") or usage.get("output_tokens_details")
        reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
        return cls(
            prompt_tokens=_int(usage.get("prompt_tokens", usage.get("input_tokens"))),
            completion_tokens=_int(usage.get("completion_tokens", usage.get("output_tokens"))),
            reasoning_tokens=_int(reasoning),
        )

    def merged(self, later: Usage | None) -> Usage:
        """Anthropic streams split usage over two events (input in message_start, output in
        message_delta, cumulative): the larger of each count."""
        if later is None:
            return self
        return Usage(
            max(self.prompt_tokens, later.prompt_tokens),
            max(self.completion_tokens, later.completion_tokens),
            max(self.reasoning_tokens, later.reasoning_tokens),
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True, slots=True)
class DiffusionRun:
    """How a diffusion backend ran this request: its server-wide sampler settings (from the gateway's
    configuration of that backend) and the per-request canvas and step cap that were sent."""

    sampler: str
    entropy_bound: float
    canvas_length: int
    max_steps: int

    def canvases(self, completion_tokens: int) -> int:
        # A reply of any length costs at least one whole canvas (docs/backends.md).
        return max(1, -(-completion_tokens // self.canvas_length))

    def fill(self, completion_tokens: int) -> float:
        return completion_tokens / (self.canvases(completion_tokens) * self.canvas_length)


@dataclass(slots=True)
class RequestRecord:
    # The gateway's own id (random): the response's x-request-id and the one sent to the backend.
    request_id: str
    method: str
    # The route path, never the query string (a key pasted into a URL must not reach a log).
    path: str
    started: float
    # The client's x-request-id, when it was at most 128 printable ASCII characters: logged and traced
    # beside the gateway's id, never in its place.
    client_request_id: str | None = None
    principal: str | None = None
    # The principal as a metric label: a key name, "jwt" or "jwt:<tier>", "anonymous" (bounded values).
    principal_label: str | None = None
    backend: str | None = None
    route_reasons: tuple[str, ...] = ()
    # The difficulty scorer's score and the backend the decision chose first (before any fallback).
    route_score: float | None = None
    routed_to: str | None = None
    stream: bool = False
    status: int = 0
    # ok | client_error | auth_error | upstream_<kind> | disconnected | server_error
    outcome: str = ""
    error_code: str | None = None
    ttfb: float | None = None
    # The stream pacing budget in seconds, when the answer was paced.
    pacing: float | None = None
    usage: Usage | None = None
    # SSE events relayed to the client, and whether ``usage`` is an estimate from them (a stream the
    # client abandoned before the backend's usage event).
    relayed_events: int = 0
    usage_estimated: bool = False
    # (from, to, reason) for each switch of backend.
    fallbacks: list[tuple[str, str, str]] = field(default_factory=list)
    # (backend, kind) for each failed attempt.
    upstream_errors: list[tuple[str, str]] = field(default_factory=list)
    diffusion: DiffusionRun | None = None
    # Prompt and completion text, only when telemetry.log_content is on, cut to content_limit characters.
    content: dict[str, str] | None = None
    content_limit: int = 0
    # x-ratelimit-* headers for every response once admitted, and what runs when the request has ended
    # (charging tokens, giving back a concurrency slot).
    rate_headers: tuple[tuple[str, str], ...] = ()
    on_end: list[Callable[[RequestRecord], Awaitable[None]]] = field(default_factory=list)
    # ---- for the usage ledger and traces ----
    api: str | None = None  # chat | completions | responses | messages: set on the proxied APIs only
    model: str | None = None  # the model the client asked for
    principal_kind: str | None = None
    tier: str | None = None
    # Seconds the backends worked on this request: every attempt, from send to the last byte read.
    backend_seconds: float = 0.0
    # The request's trace (gateway.telemetry.tracing.RequestTrace) when tracing is on, else None.
    trace: Any = None
    # Why its credential was refused (a 401: AuthenticationFailed.reason), else None. Such a request gets
    # no ledger row and no request log line of its own: it is counted by reason, its log line sampled.
    auth_failure: str | None = None
    # The request's shadow sample (gateway.shadow.sampling.Sample) when it was drawn for shadow evaluation,
    # else None; then also the text of the answer the client received, which the sample compares.
    shadow: Any = None
    answer: str | None = None
