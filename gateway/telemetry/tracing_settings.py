"""The ``telemetry.tracing:`` section (issue 19). Kept apart from tracing.py so that reading the
configuration never imports OpenTelemetry."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, HttpUrl

__all__ = ["TracingSettings"]


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
