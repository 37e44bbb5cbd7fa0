"""A backend as the routing decision sees it: a snapshot of its state, taken once per request."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BackendView"]


@dataclass(frozen=True, slots=True)
class BackendView:
    """What the decision may know about a backend right now."""

    name: str
    kind: str
    model: str
    max_concurrency: int
    in_flight: int = 0
    available: bool = True  # healthy and its circuit breaker lets requests through
    expected_latency: float = 1.0  # seconds for a typical answer, observed or configured
    # The API dialects it serves (chat, completions, responses, messages): a backend.endpoints setting.
    endpoints: frozenset[str] = frozenset({"chat", "completions", "responses", "messages"})
