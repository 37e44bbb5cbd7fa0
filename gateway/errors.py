"""The gateway's exceptions, and the one place they become the error envelope every path answers with.

    Error                        the root: every exception the gateway raises on purpose
    ├── ConfigError              invalid configuration; the message names the key (never an HTTP answer)
    ├── ModelError               a difficulty-scorer model file that cannot be used
    ├── DataError                a training/evaluation file that cannot be read (also a ValueError)
    ├── StoreUnavailable         the state store (Redis) did not answer; limits turn it into a 503
    ├── ClientDisconnected       the client left before its answer was complete
    ├── UpstreamError            a backend attempt failed (gateway.upstream: connect, timeout, broken);
    │                            the proxy turns it into UpstreamFailure or a fallback
    ├── CallFailed               a shadow or judge request of the gateway's own failed (gateway.shadow)
    └── GatewayError             an error with an HTTP status and an OpenAI error body
    ├── InvalidRequest           400 invalid_request_error
    ├── AuthenticationFailed     401 (never echoes the credential)
    ├── PermissionDenied         403
    ├── NotFound                 404 (unknown path or model)
    ├── MethodNotAllowed         405
    ├── PayloadTooLarge          413
    ├── UnsupportedMediaType     415 (a Content-Encoding the gateway does not decode)
    ├── ClientClosedRequest      499 (the client left before its request was received; logged only)
    ├── IdentityProviderDown     503 (JWKS unreachable and no cached key: not the caller's fault)
    ├── UpstreamFailure          502 / 503 / 504, raised by the proxy from upstream.UpstreamError
    ├── RateLimited, LimiterUnavailable (gateway.limits), UsageUnavailable (gateway.api.usage)

A GatewayError becomes a response only in :func:`error_response`: the exception handlers, the hot path,
the last-resort 500 of the request middleware and the operator listener all call it. (The edge's
connection-level answers, written before any ASGI app runs, use :func:`error_body` for the same body.)

Bodies follow OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``. On ``/v1/messages``
the same body also carries Anthropic's top-level ``"type": "error"`` and Anthropic's error type names, so
that Anthropic SDKs raise the right exception class; OpenAI clients read the same fields as everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson
from starlette.responses import Response

from gateway.wire import BACKEND_HEADER

__all__ = [
    "AuthenticationFailed",
    "ClientClosedRequest",
    "ClientDisconnected",
    "ConfigError",
    "DataError",
    "Error",
    "GatewayError",
    "IdentityProviderDown",
    "InvalidRequest",
    "MethodNotAllowed",
    "ModelError",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "StoreUnavailable",
    "UnsupportedMediaType",
    "UpstreamError",
    "UpstreamFailure",
    "anthropic_error_body",
    "error_body",
    "error_response",
]


# https://docs.anthropic.com/en/api/errors: the error type for each status.
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
}


def error_body(message: str, type_: str, code: str | None = None, param: str | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": type_, "param": param, "code": code}})


def anthropic_error_body(
    status: int, message: str, code: str | None = None, param: str | None = None
) -> bytes:
    kind = _ANTHROPIC_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")
    error = {"type": kind, "message": message, "param": param, "code": code}
    return orjson.dumps({"type": "error", "error": error})


class Error(Exception):
    """The root of the gateway's own exceptions: ``except Error`` catches what the gateway raised on
    purpose and nothing a bug or a library raised."""


class ConfigError(Error):
    """The configuration is invalid; the message names the key and the reason."""


class ModelError(Error):
    """A scorer model file that cannot be used; the message says why."""


class DataError(Error, ValueError):
    """A training or evaluation file that cannot be read; the message names the file and line."""


class StoreUnavailable(Error):
    """The state store did not answer in time or at all."""


class ClientDisconnected(Error):
    """The client went away before the answer was complete."""


class UpstreamError(Error):
    """An attempt at a backend failed; ``kind`` names how (gateway.upstream defines the kinds)."""

    kind = "error"


class GatewayError(Error):
    status: int = 500
    type: str = "server_error"
    code: str | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.param = param
        self.headers = dict(headers or {})

    def body(self, *, anthropic: bool = False) -> bytes:
        if anthropic:
            return anthropic_error_body(self.status, self.message, self.code, self.param)
        return error_body(self.message, self.type, self.code, self.param)


class InvalidRequest(GatewayError):
    status = 400
    type = "invalid_request_error"


class AuthenticationFailed(GatewayError):
    status = 401
    type = "invalid_request_error"
    code = "invalid_api_key"

    def __init__(self, message: str, *, reason: str) -> None:
        # ``reason`` is a fixed code for metrics and logs; the message never holds the credential.
        super().__init__(message, headers={"www-authenticate": 'Bearer realm="gateway"'})
        self.reason = reason


class PermissionDenied(GatewayError):
    status = 403
    type = "permission_error"
    code = "model_not_allowed"


class NotFound(GatewayError):
    status = 404
    type = "invalid_request_error"


class MethodNotAllowed(GatewayError):
    status = 405
    type = "invalid_request_error"
    code = "method_not_allowed"


class PayloadTooLarge(GatewayError):
    status = 413
    type = "invalid_request_error"
    code = "request_too_large"


class UnsupportedMediaType(GatewayError):
    status = 415
    type = "invalid_request_error"
    code = "unsupported_encoding"


class ClientClosedRequest(GatewayError):
    """The connection went away while the request was being received (edge.body_timeout, or the client
    hung up). Nobody reads the answer: 499 is for the request log, as nginx uses it."""

    status = 499
    type = "invalid_request_error"
    code = "client_closed_request"


class IdentityProviderDown(GatewayError):
    status = 503
    type = "server_error"
    code = "identity_provider_unavailable"


class UpstreamFailure(GatewayError):
    """A backend failed before the first byte reached the client."""

    type = "server_error"

    def __init__(self, message: str, *, status: int, code: str, backend: str | None = None) -> None:
        super().__init__(message, code=code)
        self.status = status
        self.backend = backend


def error_response(exc: GatewayError, *, anthropic: bool = False) -> Response:
    """The error as a response (an ASGI app too); ``anthropic`` on /v1/messages (see the module's doc)."""
    response = Response(exc.body(anthropic=anthropic), status_code=exc.status, media_type="application/json")
    for key, value in exc.headers.items():
        response.headers[key] = value
    if isinstance(exc, UpstreamFailure) and exc.backend is not None and BACKEND_HEADER not in exc.headers:
        response.headers[BACKEND_HEADER] = exc.backend
    return response
