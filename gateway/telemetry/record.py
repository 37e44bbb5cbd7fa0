"""The per-request record that the proxy fills in and the telemetry middleware reports once, at the end."""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.proxy.sse import Usage

__all__ = ["RequestRecord"]


@dataclass(slots=True)
class RequestRecord:
    request_id: str
    method: str
    # The route path, never the query string (a key pasted into a URL must not reach a log).
    path: str
    started: float
    principal: str | None = None
    backend: str | None = None
    route_reasons: tuple[str, ...] = ()
    stream: bool = False
    status: int = 0
    # ok | client_error | auth_error | upstream_<kind> | disconnected | server_error
    outcome: str = ""
    error_code: str | None = None
    ttfb: float | None = None
    usage: Usage | None = None
    extra: dict[str, object] = field(default_factory=dict)
