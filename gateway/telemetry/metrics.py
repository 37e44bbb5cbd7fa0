"""Prometheus metrics. Every metric lives in an injectable registry, so tests read exact values from a
fresh one; every label value comes from a bounded set (configured names, fixed codes), never from a request.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram

from gateway.telemetry.record import RequestRecord

__all__ = ["OUTCOMES", "Metrics"]

OUTCOMES = frozenset(
    {
        "ok",
        "client_error",
        "auth_error",
        "upstream_connect",
        "upstream_timeout",
        "upstream_broken",
        "upstream_status",
        "disconnected",
        "server_error",
    }
)
AUTH_REASONS = frozenset(
    {
        "missing",
        "malformed",
        "invalid",
        "revoked",
        "expired",
        "not_yet_valid",
        "audience",
        "issuer",
        "missing_claim",
        "signature",
        "algorithm",
        "unknown_kid",
    }
)
OTHER = "other"
NONE = "none"

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


class Metrics:
    def __init__(self, registry: CollectorRegistry, backends: Iterable[str]) -> None:
        self.registry = registry
        self._backends = frozenset(backends)
        self.requests = Counter(
            "gateway_requests",
            "Requests answered, by backend, outcome and whether streamed.",
            ["backend", "outcome", "stream"],
            registry=registry,
        )
        self.duration = Histogram(
            "gateway_request_duration_seconds",
            "End-to-end time from request received to last byte sent.",
            ["backend"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.ttfb = Histogram(
            "gateway_time_to_first_byte_seconds",
            "Time from request received to the first body byte sent to the client.",
            ["backend", "stream"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.tokens = Counter(
            "gateway_tokens",
            "Tokens from the backends' usage reports, streams included.",
            ["backend", "type"],
            registry=registry,
        )
        self.auth_failures = Counter(
            "gateway_auth_failures", "Rejected credentials, by reason.", ["reason"], registry=registry
        )

    def backend_label(self, name: str | None) -> str:
        if name is None:
            return NONE
        return name if name in self._backends else OTHER

    def auth_failed(self, reason: str) -> None:
        self.auth_failures.labels(reason if reason in AUTH_REASONS else OTHER).inc()

    def observe(self, record: RequestRecord, finished: float) -> None:
        backend = self.backend_label(record.backend)
        stream = "true" if record.stream else "false"
        outcome = record.outcome if record.outcome in OUTCOMES else OTHER
        self.requests.labels(backend, outcome, stream).inc()
        if record.backend is None:
            return
        self.duration.labels(backend).observe(finished - record.started)
        if record.ttfb is not None:
            self.ttfb.labels(backend, stream).observe(record.ttfb)
        usage = record.usage
        if usage is not None:
            self.tokens.labels(backend, "prompt").inc(usage.prompt_tokens)
            self.tokens.labels(backend, "completion").inc(usage.completion_tokens)
            self.tokens.labels(backend, "reasoning").inc(usage.reasoning_tokens)
