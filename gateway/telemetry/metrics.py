"""Prometheus metrics. Every metric lives in an injectable registry, so tests read exact values from a
fresh one. Every label value comes from a bounded set: configured backend, key, tier and rule names,
fixed reason and outcome codes, buckets. Anything else becomes ``other`` (docs/peers.md #5), and no label ever
holds a request's model string, a prompt, a key or a digest.

The names and labels are documented in one table in docs/operations.md (Metrics).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from gateway.record import RequestRecord

__all__ = ["AUTH_REASONS", "OUTCOMES", "Metrics", "length_bucket"]

OUTCOMES = frozenset(
    {
        "ok",
        "client_error",
        "auth_error",
        "rate_limited",
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
        "invalid_claim",
        "signature",
        "algorithm",
        "unknown_kid",
    }
)
# Route reason codes without a configured part (see gateway/routing/decision.py).
_REASONS = frozenset(
    {
        "explicit:header",
        "explicit:model",
        "explicit:alias",
        "default",
        "adapted:temperature",
        "spillover",
        "queued",
        "tool-heavy:tools",
        "tool-heavy:tool_choice",
        "tool-heavy:agent-loop",
        "hard:code",
        "hard:thinking",
        "hard:score",  # hard:score=0.91, the value cut off (routing.scorer)
        "default:score",
        "incompatible:temperature",
        "incompatible:structured_output",
        "incompatible:image",
        "incompatible:media",
        "incompatible:logprobs",
        "incompatible:seed",
        "incompatible:min_p",
        "incompatible:min_tokens",
        "incompatible:logit_bias",
        "incompatible:bad_words",
        "incompatible:allowed_token_ids",
    }
)
_FALLBACK_REASONS = frozenset(
    {
        "connect",
        "timeout",
        "broken",
        "backend_auth",
        "breaker_open",
        "status_429",
        "status_500",
        "status_502",
        "status_503",
        "status_504",
        "quality:tool_json",
        "quality:tool_required",
        "quality:empty",
        "quality:markup",
        "quality:repetition",
    }
)
_ERROR_KINDS = frozenset(
    {"connect", "timeout", "broken", "backend_auth", "status_429", "status_5xx", "stream_interrupted"}
)
OTHER = "other"
NONE = "none"
# Key names come from the key file, which only operators write; still, a label set has a ceiling.
MAX_PRINCIPALS = 1000

# Difficulty scores: finer near the usual thresholds, where an operator reads how close the calls are.
_SCORES = (0.05, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
_LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 120, 300)
_THROUGHPUT = (1, 5, 10, 20, 50, 100, 200, 400, 800, 1600, 3200)
_LENGTHS = ((16, "1-16"), (64, "17-64"), (256, "65-256"), (1024, "257-1024"))


def length_bucket(completion_tokens: int) -> str:
    """Output-length buckets: a 2-token reply and a 2,000-token essay are never averaged together."""
    if completion_tokens <= 0:
        return "0"
    for limit, name in _LENGTHS:
        if completion_tokens <= limit:
            return name
    return "1025+"


class Metrics:
    def __init__(
        self,
        registry: CollectorRegistry,
        backends: Iterable[str],
        *,
        rules: Iterable[str] = (),
        tiers: Iterable[str] = (),
        principal_labels: str = "name",
    ) -> None:
        self.registry = registry
        # telemetry.metrics_principal: key names as they are, hashed, or only the key's tier.
        self._principal_labels = principal_labels
        self._backends = frozenset(backends)
        self._reasons = _REASONS | {f"rule:{r}" for r in rules} | {f"unavailable:{b}" for b in self._backends}
        self._tiers = frozenset(tiers)
        self._principals: set[str] = set()
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}

        def counter(name: str, doc: str, labels: list[str]) -> Counter:
            return Counter(name, doc, labels, registry=registry)

        def histogram(name: str, doc: str, labels: list[str], buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, doc, labels, buckets=buckets, registry=registry)

        self.requests = counter(
            "gateway_requests",
            "Requests answered, by backend, primary route reason, outcome, streamed or not, and principal.",
            ["backend", "route", "outcome", "stream", "principal"],
        )
        self.route_reasons = counter(
            "gateway_route_reasons", "Every reason code behind a routing decision.", ["backend", "reason"]
        )
        self.route_score = histogram(
            "gateway_route_score",
            "The difficulty scorer's score per request routed by policy (model auto, no route header), "
            "by the backend the decision chose first.",
            ["backend"],
            _SCORES,
        )
        self.duration = histogram(
            "gateway_request_duration_seconds",
            "End to end: request received to last byte sent.",
            ["backend", "stream"],
            _LATENCY,
        )
        self.ttfb = histogram(
            "gateway_time_to_first_byte_seconds",
            "Request received to the first body byte sent to the client.",
            ["backend", "stream"],
            _LATENCY,
        )
        self.tokens = counter(
            "gateway_tokens",
            "Tokens from the backends' usage reports, streams included.",
            ["backend", "type"],
        )
        self.principal_tokens = counter(
            "gateway_principal_tokens", "Tokens by principal, from usage.", ["principal", "type"]
        )
        self.throughput = histogram(
            "gateway_output_tokens_per_second",
            "Completion tokens over end-to-end time, by output-length bucket.",
            ["backend", "length"],
            _THROUGHPUT,
        )
        diffusion_labels = ["backend", "sampler", "entropy_bound", "canvas_length", "max_steps"]
        self.diffusion_requests = counter(
            "gateway_diffusion_requests",
            "Requests served by a diffusion backend, with the sampler, entropy bound, canvas and step cap.",
            diffusion_labels,
        )
        self.diffusion_canvases = histogram(
            "gateway_diffusion_canvases",
            "Canvases (blocks) per diffusion answer: ceil(completion_tokens / canvas_length).",
            diffusion_labels,
            (1, 2, 3, 4, 6, 8, 12, 16, 32),
        )
        self.diffusion_fill = histogram(
            "gateway_diffusion_canvas_fill_ratio",
            "completion_tokens / (canvases x canvas_length): how much of the paid-for canvas was used.",
            diffusion_labels,
            (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0),
        )
        self.fallbacks = counter(
            "gateway_fallbacks",
            "Switches of backend before the first byte.",
            ["from_backend", "to_backend", "reason"],
        )
        self.upstream_errors = counter(
            "gateway_upstream_errors", "Failed attempts at a backend, by kind.", ["backend", "kind"]
        )
        self.auth_failures = counter("gateway_auth_failures", "Rejected credentials, by reason.", ["reason"])
        self.rate_limited = counter(
            "gateway_rate_limited",
            "Requests rejected by a limit, by principal and limit.",
            ["principal", "limit"],
        )
        self.state_errors = counter(
            "gateway_state_store_errors", "Calls to the state store (Redis) that failed or timed out.", ["op"]
        )
        # The usage ledger: rows written, and rows dropped because the store could not keep up.
        self.usage_written = counter(
            "gateway_usage_records_written",
            "Usage ledger rows written, by store (sqlite, postgresql).",
            ["store"],
        )
        self.usage_dropped = counter(
            "gateway_usage_records_dropped",
            "Usage ledger rows dropped: queue_full (store slow or down), shutdown, refused, timeout.",
            ["reason"],
        )
        # The edge: client connections, by listener (main, operator). Summed over live workers.
        self.connections_open = Gauge(
            "gateway_connections_open",
            "Open client connections, by listener.",
            ["listener"],
            registry=registry,
            multiprocess_mode="livesum",
        )
        self.connections_limit = Gauge(
            "gateway_connections_limit",
            "The cap on open client connections, by listener (edge.max_connections); summed over workers.",
            ["listener"],
            registry=registry,
            multiprocess_mode="livesum",
        )
        self.connections_refused = counter(
            "gateway_connections_refused",
            "Client connections closed on arrival because the listener was at its cap.",
            ["listener"],
        )
        self.connections_closed = counter(
            "gateway_connections_closed_by_deadline",
            "Client connections closed because a request's head or body was not received in time, or the"
            " client read nothing of its answer for edge.send_timeout.",
            ["phase"],
        )
        for listener in ("main", "operator"):
            self.connections_open.labels(listener)
            self.connections_refused.labels(listener)
        for phase in ("header", "body", "send"):
            self.connections_closed.labels(phase)

    # ---- bounded label values ---------------------------------------------------------------------------

    def backend_label(self, name: str | None) -> str:
        if name is None:
            return NONE
        return name if name in self._backends else OTHER

    def principal_label(self, kind: str, name: str, tier: str | None) -> str:
        """A key's name; JWT subjects are unbounded, so a JWT principal is counted by its tier."""
        if kind == "anonymous":
            return "anonymous"
        if kind == "jwt":
            return f"jwt:{tier}" if tier in self._tiers else "jwt"
        if self._principal_labels == "tier":
            return f"key:{tier}" if tier in self._tiers else "key"
        if self._principal_labels == "hash":
            # Stable across restarts and workers; names the key to whoever holds the key file, no one else.
            name = "key-" + hashlib.sha256(name.encode()).hexdigest()[:12]
        if name in self._principals:
            return name
        if len(self._principals) < MAX_PRINCIPALS:
            self._principals.add(name)
            return name
        return OTHER

    def _reason(self, reason: str) -> str:
        if reason in self._reasons:
            return reason
        # hard:score=0.91 and default:score=0.12: the value is the histogram's, not a label's.
        name, _, _ = reason.partition("=")
        return name if name in self._reasons else OTHER

    # ---- recording --------------------------------------------------------------------------------------

    def auth_failed(self, reason: str) -> None:
        self.auth_failures.labels(reason if reason in AUTH_REASONS else OTHER).inc()

    def _child(self, metric: Counter | Histogram, *labels: str) -> Any:
        """``metric.labels(...)`` with the children cached: label lookups are a hot-path cost."""
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def observe(self, record: RequestRecord, finished: float) -> None:
        backend = self.backend_label(record.backend)
        stream = "true" if record.stream else "false"
        outcome = record.outcome if record.outcome in OUTCOMES else OTHER
        route = self._reason(record.route_reasons[0]) if record.route_reasons else NONE
        principal = record.principal_label or NONE
        self._child(self.requests, backend, route, outcome, stream, principal).inc()
        for reason in record.route_reasons:
            self._child(self.route_reasons, backend, self._reason(reason)).inc()
        if record.route_score is not None:
            self._child(self.route_score, self.backend_label(record.routed_to)).observe(record.route_score)
        for source, target, why in record.fallbacks:
            reason = why if why in _FALLBACK_REASONS else OTHER
            self._child(self.fallbacks, self.backend_label(source), self.backend_label(target), reason).inc()
        for failed, kind in record.upstream_errors:
            self._child(
                self.upstream_errors, self.backend_label(failed), kind if kind in _ERROR_KINDS else OTHER
            ).inc()
        if record.backend is None:
            return
        elapsed = finished - record.started
        self._child(self.duration, backend, stream).observe(elapsed)
        if record.ttfb is not None:
            self._child(self.ttfb, backend, stream).observe(record.ttfb)
        usage = record.usage
        if usage is None:
            return
        for kind, count in (
            ("prompt", usage.prompt_tokens),
            ("completion", usage.completion_tokens),
            ("reasoning", usage.reasoning_tokens),
        ):
            tokens = self._child(self.tokens, backend, kind)  # the series exists from here on, even at 0
            principal_tokens = self._child(self.principal_tokens, principal, kind)
            if count:  # an increment by 0 (reasoning, mostly) still takes the value's lock
                tokens.inc(count)
                principal_tokens.inc(count)
        if elapsed > 0 and usage.completion_tokens > 0:
            bucket = length_bucket(usage.completion_tokens)
            self._child(self.throughput, backend, bucket).observe(usage.completion_tokens / elapsed)
        run = record.diffusion
        if run is not None:
            labels = (
                backend,
                run.sampler,
                f"{run.entropy_bound:g}",
                str(run.canvas_length),
                str(run.max_steps),
            )
            self._child(self.diffusion_requests, *labels).inc()
            self._child(self.diffusion_canvases, *labels).observe(run.canvases(usage.completion_tokens))
            self._child(self.diffusion_fill, *labels).observe(run.fill(usage.completion_tokens))
