"""The gateway's exceptions and the one error envelope every path answers with.

    GatewayError                 an error with an HTTP status and an OpenAI error body
    ├── InvalidRequest           400 invalid_request_error
    ├── AuthenticationFailed     401 (never echoes the credential)
    ├── PermissionDenied         403
    ├── NotFound                 404 (unknown path or model)
    ├── MethodNotAllowed         405
    ├── PayloadTooLarge          413
    ├── UnsupportedMediaType     415 (a Content-Encoding the gateway does not decode)
    ├── ClientClosedRequest      499 (the client left before its request was received; logged only)
    ├── IdentityProviderDown     503 (JWKS unreachable and no cached key: not the caller's fault)
    └── UpstreamFailure          502 / 503 / 504, raised by the proxy from upstream.UpstreamError

Bodies follow OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``. On ``/v1/messages``
the same body also carries Anthropic's top-level ``"type": "error"`` and Anthropic's error type names, so
that Anthropic SDKs raise the right exception class; OpenAI clients read the same fields as everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

__all__ = [
    "AuthenticationFailed",
    "ClientClosedRequest",
    "GatewayError",
    "IdentityProviderDown",
    "InvalidRequest",
    "MethodNotAllowed",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "UnsupportedMediaType",
    "UpstreamFailure",
    "anthropic_error_body",
    "error_body",
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


class GatewayError(Exception):
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
