"""OpenTelemetry traces: a SERVER span per proxied request, following the GenAI semantic
conventions, with a CLIENT child span for each attempt at a backend whose W3C ``traceparent`` goes to
that backend, so that vLLM's own spans (``--otlp-traces-endpoint``) join the same trace.

This module imports OpenTelemetry (the optional ``tracing`` extra) and is itself imported only when
``telemetry.tracing.enabled`` is on: with tracing off the hot path pays an ``is None`` test per stage and
loads nothing (bench/tracing_overhead.py). Spans are exported in batches from the SDK's own thread.

What a span never holds: the credential, any request header, and prompt text unless
``telemetry.capture_content`` is on.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import orjson
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from gateway.record import RequestRecord
from gateway.telemetry.settings import TelemetrySettings
from gateway.upstream.settings import BackendSettings

__all__ = ["AttemptSpan", "RequestTrace", "TracedRequest", "Tracer"]

# gen_ai.operation.name for each API the gateway proxies.
_OPERATION = {"chat": "chat", "completions": "text_completion", "responses": "chat", "messages": "chat"}
_TRACE_HEADERS = frozenset({"traceparent", "tracestate"})
_PROVIDER = "vllm"


class TracedRequest(Protocol):
    """What a span reads of a parsed request (the proxy's ``ProxiedRequest``): a protocol, so that
    telemetry, below the proxy, never imports it."""

    @property
    def payload(self) -> dict[str, Any]: ...

    @property
    def view(self) -> dict[str, Any]: ...


class Tracer:
    def __init__(self, telemetry: TelemetrySettings, backends: Iterable[BackendSettings]) -> None:
        tracing = telemetry.tracing
        self.capture_content = telemetry.capture_content
        self.trust_incoming = tracing.trust_incoming
        self._models = {b.name: b.model for b in backends}
        self.provider = TracerProvider(
            resource=Resource.create({"service.name": tracing.service_name}),
            sampler=ParentBased(TraceIdRatioBased(tracing.sample_ratio)),
            shutdown_on_exit=False,  # the app's lifespan shuts it down (and flushes)
        )
        exporter = OTLPSpanExporter(endpoint=str(tracing.endpoint), timeout=tracing.export_timeout)
        self.provider.add_span_processor(
            BatchSpanProcessor(
                exporter,
                schedule_delay_millis=tracing.export_interval * 1000,
                export_timeout_millis=tracing.export_timeout * 1000,
            )
        )
        self._tracer = self.provider.get_tracer("diffusion-gateway")
        self._propagator = TraceContextTextMapPropagator()

    def start(self, record: RequestRecord, headers: Mapping[str, str], api: str) -> RequestTrace:
        parent = None
        if self.trust_incoming and "traceparent" in headers:
            parent = self._propagator.extract({k: headers[k] for k in _TRACE_HEADERS if k in headers})
        operation = _OPERATION.get(api, api)
        attributes = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": _PROVIDER,
            "http.request.method": record.method,
            "url.path": record.path,
            "gateway.request_id": record.request_id,
            "gateway.api": api,
        }
        if record.client_request_id is not None:
            attributes["gateway.client_request_id"] = record.client_request_id
        span = self._tracer.start_span(operation, context=parent, kind=SpanKind.SERVER, attributes=attributes)
        return RequestTrace(self, span, operation)

    def finish(self, record: RequestRecord, finished: float) -> None:
        """The middleware's finisher: the request span ends once the last byte went out."""
        request_trace = record.trace
        if isinstance(request_trace, RequestTrace):
            request_trace.finish(record, self._models)

    def shutdown(self) -> None:
        """Flush what is batched and stop the exporter (blocking: run it in a worker thread)."""
        self.provider.shutdown()


class RequestTrace:
    """The spans of one request; reached through ``RequestRecord.trace``."""

    __slots__ = ("_operation", "_tracer", "attempts", "span")

    def __init__(self, tracer: Tracer, span: trace.Span, operation: str) -> None:
        self._tracer = tracer
        self._operation = operation
        self.span = span
        self.attempts = 0

    def request(self, parsed: TracedRequest) -> None:
        """What the client asked for; prompt text only with telemetry.capture_content."""
        span = self.span
        payload = parsed.payload
        for key, attribute in (
            ("max_tokens", "gen_ai.request.max_tokens"),
            ("max_completion_tokens", "gen_ai.request.max_tokens"),
            ("max_output_tokens", "gen_ai.request.max_tokens"),
            ("temperature", "gen_ai.request.temperature"),
            ("top_p", "gen_ai.request.top_p"),
            ("seed", "gen_ai.request.seed"),
        ):
            value = payload.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                span.set_attribute(attribute, value)
        if self._tracer.capture_content:
            view = parsed.view
            prompt = view.get("messages", view.get("prompt"))
            span.set_attribute("gen_ai.input.messages", orjson.dumps(prompt).decode())

    def attempt(self, backend: BackendSettings) -> AttemptSpan:
        self.attempts += 1
        url = backend.url
        span = self._tracer._tracer.start_span(
            f"{self._operation} {backend.model}",
            context=trace.set_span_in_context(self.span),
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": self._operation,
                "gen_ai.provider.name": _PROVIDER,
                "gen_ai.request.model": backend.model,
                "server.address": url.host or "",
                "server.port": url.port or 80,
                "gateway.backend": backend.name,
                "gateway.backend.kind": backend.kind,
                "gateway.attempt": self.attempts,
            },
        )
        return AttemptSpan(span, self._tracer._propagator)

    def finish(self, record: RequestRecord, models: Mapping[str, str]) -> None:
        span = self.span
        if record.model is not None:
            span.update_name(f"{self._operation} {record.model}")
            span.set_attribute("gen_ai.request.model", record.model)
        if record.backend is not None:
            span.set_attribute("gateway.backend", record.backend)
            model = models.get(record.backend)
            if model is not None and record.usage is not None:
                span.set_attribute("gen_ai.response.model", model)
        if record.route_reasons:
            span.set_attribute("gateway.route.reasons", list(record.route_reasons))
        if record.fallbacks:
            span.set_attribute("gateway.fallback", [f"{a}>{b}:{why}" for a, b, why in record.fallbacks])
        if record.principal is not None:
            span.set_attribute("gateway.principal", record.principal)
        span.set_attribute("gateway.stream", record.stream)
        span.set_attribute("gateway.outcome", record.outcome)
        span.set_attribute("http.response.status_code", record.status)
        span.set_attribute("gateway.backend_seconds", round(record.backend_seconds, 6))
        if record.ttfb is not None:
            span.set_attribute("gateway.ttfb_ms", round(record.ttfb * 1000, 3))
        usage = record.usage
        if usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
            span.set_attribute("gen_ai.usage.reasoning_tokens", usage.reasoning_tokens)
        run = record.diffusion
        if run is not None and record.backend is not None:
            span.set_attribute("gateway.diffusion.sampler", run.sampler)
            span.set_attribute("gateway.diffusion.entropy_bound", run.entropy_bound)
            span.set_attribute("gateway.diffusion.canvas_length", run.canvas_length)
            span.set_attribute("gateway.diffusion.max_steps", run.max_steps)
            if usage is not None:
                fill = round(run.fill(usage.completion_tokens), 4)
                span.set_attribute("gateway.diffusion.canvas_fill", fill)
        if record.outcome != "ok":
            span.set_attribute("error.type", record.error_code or record.outcome)
            span.set_status(Status(StatusCode.ERROR, record.outcome))
        span.end()


class AttemptSpan:
    """One attempt at a backend: its headers carry this span's context to the backend."""

    __slots__ = ("_propagator", "span")

    def __init__(self, span: trace.Span, propagator: TraceContextTextMapPropagator) -> None:
        self.span = span
        self._propagator = propagator

    def headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """``headers`` with the client's trace headers replaced by this span's."""
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context=trace.set_span_in_context(self.span))
        kept = [(k, v) for k, v in headers if k.lower() not in _TRACE_HEADERS]
        return kept + list(carrier.items())

    def end(self, outcome: str, status: int | None = None) -> None:
        span = self.span
        span.set_attribute("gateway.outcome", outcome)
        if status is not None:
            span.set_attribute("http.response.status_code", status)
        if outcome not in ("ok", "client_error"):
            span.set_attribute("error.type", outcome)
            span.set_status(Status(StatusCode.ERROR, outcome))
        span.end(end_time=time.time_ns())
