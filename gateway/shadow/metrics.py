"""Shadow evaluation's metrics: the router's mistakes by score bucket, and what measuring them cost.

Every label value comes from a bounded set: configured backend names, the fixed reasons and verdicts
below, score buckets in tenths. The series an alert or a dashboard reads exist from the start (at zero),
created when the runner starts, so ``increase()`` has a baseline.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter

from gateway.shadow.judge import DISCARDS, VERDICTS
from gateway.upstream.settings import BackendSettings

__all__ = ["BUCKETS", "DISCARD_REASONS", "JUDGE_SKIPS", "SKIP_REASONS", "WORK", "ShadowMetrics"]

WORK = ("shadow", "judge")
BUCKETS = tuple(f"{i / 10:.1f}" for i in range(10))
# Why a drawn request was not shadowed, or a judge not asked (gateway/shadow/sampling.py, budget.py).
SKIP_REASONS = (
    "api",
    "n",
    "explicit",
    "incompatible",
    "rule",
    "unscored",
    "not_allowed",
    "failed",
    "fallback",
    "rerouted",
    "queue_full",
    "busy",
    "budget",
)
# Why a judge was not asked: its backend had no room.
JUDGE_SKIPS = ("busy", "budget")
# Why a shadowed request got no verdict.
DISCARD_REASONS = ("shadow_failed", "truncated", *DISCARDS)


class ShadowMetrics:
    def __init__(self, registry: CollectorRegistry, backends: Sequence[BackendSettings]) -> None:
        self._backends = list(backends)

        def counter(name: str, doc: str, labels: list[str]) -> Counter:
            return Counter(name, doc, labels, registry=registry)

        self.regret = counter(
            "gateway_route_regret",
            "Requests routed to a diffusion backend whose answer the judge found worse than the other "
            "backend's, by score bucket and the backend they were routed to.",
            ["bucket", "backend"],
        )
        self.missed_saving = counter(
            "gateway_route_missed_saving",
            "Requests routed to an autoregressive backend whose diffusion answer the judge found as good or "
            "better, by score bucket and the backend they were routed to.",
            ["bucket", "backend"],
        )
        self.verdicts = counter(
            "gateway_shadow_verdicts",
            "Judged samples, by the backend and kind the request was routed to and the verdict on the "
            "diffusion answer.",
            ["backend", "kind", "verdict"],
        )
        self.requests = counter(
            "gateway_shadow_requests",
            "The gateway's own requests: shadow answers and judge verdicts, by backend.",
            ["work", "backend"],
        )
        self.skipped = counter(
            "gateway_shadow_skipped",
            "Drawn requests not shadowed, and samples not judged, by reason.",
            ["work", "reason"],
        )
        self.discarded = counter(
            "gateway_shadow_discarded", "Shadowed requests that got no verdict, by reason.", ["reason"]
        )
        self.backend_seconds = counter(
            "gateway_shadow_backend_seconds",
            "Seconds backends worked on the gateway's own shadow and judge requests.",
            ["work", "backend"],
        )
        self.tokens = counter(
            "gateway_shadow_tokens",
            "Backend tokens (prompt + completion) of the gateway's own shadow and judge requests.",
            ["work", "backend"],
        )

    def start(self) -> None:
        """Every series alerts and dashboards read, at zero."""
        for backend in self._backends:
            mistakes = self.regret if backend.kind == "diffusion" else self.missed_saving
            for bucket in BUCKETS:
                mistakes.labels(bucket, backend.name)
            for verdict in VERDICTS:
                self.verdicts.labels(backend.name, backend.kind, verdict)
            for work in WORK:
                self.requests.labels(work, backend.name)
                self.backend_seconds.labels(work, backend.name)
                self.tokens.labels(work, backend.name)
        for reason in SKIP_REASONS:
            self.skipped.labels("shadow", reason)
        for reason in JUDGE_SKIPS:
            self.skipped.labels("judge", reason)
        for reason in DISCARD_REASONS:
            self.discarded.labels(reason)

    def skip(self, work: str, reason: str) -> None:
        self.skipped.labels(work, reason if reason in SKIP_REASONS else "other").inc()

    def spent(self, work: str, backend: str, requests: int, seconds: float, tokens: int) -> None:
        if requests:
            self.requests.labels(work, backend).inc(requests)
        self.backend_seconds.labels(work, backend).inc(seconds)
        self.tokens.labels(work, backend).inc(tokens)
