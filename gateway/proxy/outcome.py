"""What one attempt's result means for the proxy loop: an :class:`Outcome` (a response to send, or an
error, and whether another backend could do better), from a backend's failure or its non-200 answer."""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from starlette.responses import Response

from gateway.errors import GatewayError, NotFound, UpstreamFailure
from gateway.proxy.dialects.base import json_or_none
from gateway.upstream import UpstreamError, UpstreamTooLarge
from gateway.upstream.settings import BackendSettings

__all__ = ["Outcome", "failed", "from_status", "raw_response"]

_FAILURES: dict[str, tuple[int, str, str]] = {
    "connect": (503, "backend_unavailable", "The backend could not be reached."),
    "timeout": (504, "backend_timeout", "The backend did not answer in time."),
    "broken": (502, "backend_error", "The backend's answer was broken off."),
}


@dataclass(slots=True)
class Outcome:
    response: Response | None = None
    error: GatewayError | None = None
    retry: str | None = None  # why another backend could do better
    backend_failed: bool = False  # counts against the circuit breaker
    outcome: str = "ok"  # for the request record


def raw_response(data: bytes, status: int, headers: list[tuple[str, str]]) -> Response:
    response = Response(data, status_code=status)
    response.raw_headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    return response


def failed(exc: UpstreamError, backend: BackendSettings) -> Outcome:
    """A backend that could not be reached, did not answer in time, or broke its answer off."""
    if isinstance(exc, UpstreamTooLarge):
        # The backend is not failing and another one would answer as much: no retry, no breaker count.
        error = UpstreamFailure(
            "The backend's answer is larger than the gateway's limit.",
            status=502,
            code="backend_answer_too_large",
            backend=backend.name,
        )
        return Outcome(error=error, outcome="upstream_broken")
    status, code, message = _FAILURES.get(exc.kind, _FAILURES["broken"])
    error = UpstreamFailure(message, status=status, code=code, backend=backend.name)
    return Outcome(error=error, retry=exc.kind, backend_failed=True, outcome=f"upstream_{exc.kind}")


def from_status(status: int, data: bytes, backend: BackendSettings) -> Outcome:
    """A backend's non-200 answer: the caller's own mistakes pass through; the backend's do not."""
    if status in (401, 403):
        # The backend refused the gateway's own key: a misconfiguration, not the caller's fault.
        error = UpstreamFailure(
            "The backend refused the gateway's credentials.",
            status=502,
            code="backend_auth",
            backend=backend.name,
        )
        return Outcome(error=error, retry="backend_auth", backend_failed=True, outcome="upstream_status")
    if status >= 500:
        error = UpstreamFailure(
            "The backend failed to answer the request.",
            status=503 if status == 503 else 502,
            code="backend_error",
            backend=backend.name,
        )
        return Outcome(error=error, retry=f"status_{status}", backend_failed=True, outcome="upstream_status")
    if status == 404 and _route_missing(data):
        # The backend has no such route at all (an older vLLM without /v1/responses or /v1/messages):
        # another backend may serve it; the caller gets a 404 that says so, not FastAPI's bare detail.
        missing = NotFound(f"The backend {backend.name} does not serve this API.", code="endpoint_not_served")
        return Outcome(error=missing, retry="unserved", outcome="client_error")
    response = raw_response(_envelope(data, status), status, [("content-type", "application/json")])
    if status == 429:
        # The backend is overloaded, not broken: another may answer; the breaker is left alone.
        return Outcome(response=response, retry="status_429", outcome="upstream_status")
    return Outcome(response=response, outcome="client_error")


def _route_missing(data: bytes) -> bool:
    body = json_or_none(data)
    return isinstance(body, dict) and body.get("detail") == "Not Found" and "error" not in body


def _envelope(data: bytes, status: int) -> bytes:
    """vLLM's error body if it already is an OpenAI envelope, else one built around its message."""
    body = json_or_none(data)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return data
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        message = f"The backend rejected the request (HTTP {status})."
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return orjson.dumps({"error": error})
