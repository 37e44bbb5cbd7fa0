"""The one error envelope, on every path: exception handlers for the FastAPI routes, and the response
the hot path builds itself."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import Scope

from gateway.errors import (
    AuthenticationFailed,
    ClientClosedRequest,
    GatewayError,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    error_response,
)
from gateway.limits.limiter import RateLimited

__all__ = ["error_response", "install_error_handlers", "note_error", "shown_path"]


def note_error(request_scope: Scope, exc: GatewayError) -> None:
    """Put an error's code (and a rate limit's outcome, a refused credential's reason) on the request's
    record."""
    state = request_scope.get("state")
    record = state.get("record") if isinstance(state, dict) else None
    if record is not None:
        record.error_code = exc.code
        if isinstance(exc, AuthenticationFailed):
            record.auth_failure = exc.reason
        if isinstance(exc, RateLimited):
            record.outcome = "rate_limited"
        elif isinstance(exc, ClientClosedRequest):
            record.outcome = "disconnected"


def shown_path(path: str, limit: int = 100) -> str:
    """A request path as an error message may echo it: printable ASCII only, at most ``limit`` characters
    (nothing unbounded or unprintable is echoed back to a client, or into a log reading the body)."""
    cleaned = "".join(c if " " < c < "\x7f" else "?" for c in path[: limit + 1])
    return cleaned if len(cleaned) <= limit else cleaned[:limit] + "..."


def install_error_handlers(app: FastAPI) -> None:
    """One envelope on every path: our errors, unknown routes, wrong methods. Anything unforeseen is caught
    by RequestContextMiddleware, outside these handlers, so that it too carries the request id."""

    async def gateway_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, GatewayError)
        note_error(request.scope, exc)
        return error_response(exc)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        where = f"{request.method[:16]} {shown_path(request.scope['path'])}"
        if exc.status_code == 405:
            return error_response(MethodNotAllowed(f"Method not allowed ({where})."))
        if exc.status_code == 404:
            return error_response(NotFound(f"Invalid URL ({where})", code="unknown_url"))
        error = GatewayError(str(exc.detail)[:200])
        error.status = exc.status_code
        error.type = "invalid_request_error" if exc.status_code < 500 else "server_error"
        return error_response(error)

    async def validation_error(request: Request, exc: Exception) -> Response:
        return error_response(InvalidRequest("The request is not valid.", code="invalid_request"))

    app.add_exception_handler(GatewayError, gateway_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
