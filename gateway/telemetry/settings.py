"""The ``telemetry:`` section and its ``tracing:`` part. Nothing here imports OpenTelemetry:
reading the configuration must not need the optional extra (tracing.py is imported only when it is on)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, SecretStr

__all__ = ["TelemetrySettings", "TracingSettings"]


class TracingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Off by default; on needs the optional extra: pip install 'diffusion-gateway[tracing]'.
    enabled: bool = False
    # An OTLP/HTTP (protobuf) traces endpoint: Jaeger, Tempo or an OpenTelemetry Collector.
    endpoint: HttpUrl = HttpUrl("http://127.0.0.1:4318/v1/traces")
    # Share of new traces kept (a parent's decision is followed when trust_incoming is on).
    sample_ratio: float = Field(1.0, ge=0, le=1)
    service_name: str = Field("diffusion-gateway", min_length=1, max_length=128)
    # Continue the trace a client's `traceparent` names. Off by default: a client's header would
    # otherwise choose trace ids and the sampling decision (untrusted input).
    trust_incoming: bool = False
    # Seconds the exporter waits for the endpoint, per batch.
    export_timeout: float = Field(10.0, gt=0, le=120)
    # Seconds between batches sent to the endpoint.
    export_interval: float = Field(2.0, gt=0, le=60)


class TelemetrySettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Prompt and completion text in the request log: off unless an operator turns it on, and cut short.
    log_content: bool = False
    log_content_max_chars: int = Field(2000, ge=0)
    # Scrape each backend's /metrics (load and diffusion counters) every routing.health_interval seconds.
    scrape_backends: bool = True
    # Prompt and completion text on trace spans: off unless an operator turns it on.
    capture_content: bool = False
    tracing: TracingSettings = TracingSettings()
    # GET /metrics on the main listener, where every client reaches: served there only with this bearer
    # token (None: not served there), and only while metrics_on_main is on. The operator listener
    # (edge.operator_port) always serves it and never asks for the token.
    metrics_token: SecretStr | None = None
    metrics_on_main: bool = True
    # How a key's principal is labelled in metrics: its name, a short hash of the name (names stay out
    # of the scrape), or only its tier.
    metrics_principal: Literal["name", "hash", "tier"] = "name"
    # Refused credentials (401): at most this many log lines a second for each reason (expired, signature,
    # invalid...), each saying how many were left out before it; 0: none. Every one is counted in
    # gateway_auth_failures_total whatever this says.
    auth_failure_logs_per_second: int = Field(5, ge=0, le=10_000)
