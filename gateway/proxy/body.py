"""Reading and checking a request body, and rewriting it for the backend.

Only the fields the gateway needs are read (``model``, ``stream``, ``stream_options``, the bounds); every
other field, known or not (``chat_template_kwargs``, ``vllm_xargs``, ``tools``...), passes through as it
came.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from gateway.chat_view import chat_view
from gateway.errors import ClientClosedRequest, InvalidRequest, PayloadTooLarge
from gateway.proxy.dialects import OUTPUT_LIMITS, REQUIRED, Endpoint
from gateway.proxy.encoding import content_codings, decode_off_loop
from gateway.proxy.validate import validate_parameters

__all__ = [
    "DEFAULT_MAX_JSON_DEPTH",
    "Endpoint",
    "ProxiedRequest",
    "parse_request",
    "read_body",
    "upstream_body",
]

# How deep a request's JSON may nest (server.max_json_depth): far above any real request (a tool's
# schema a few levels inside a request of three), far below orjson's own limits (it reads 1,024 levels but
# writes 255), so a body the gateway accepts is always one it can write back out for the backend.
DEFAULT_MAX_JSON_DEPTH = 64


@dataclass(slots=True)
class ProxiedRequest:
    endpoint: Endpoint
    payload: dict[str, Any]
    model: str
    stream: bool
    # Whether the client asked for the usage chunk itself; the gateway always asks upstream.
    client_wants_usage: bool

    @property
    def view(self) -> dict[str, Any]:
        """The request as chat messages and tools, for routing and quality checks (gateway.chat_view):
        the payload itself for chat and completions, a fresh reading of it for the other APIs, so it
        always reflects what the gateway changed (thinking)."""
        return chat_view(self.payload, self.endpoint)


async def read_body(request: Request, limit: int, max_encodings: int) -> bytes:
    """The body as JSON bytes: at most ``limit`` bytes as sent, and again at most ``limit`` once its
    Content-Encoding (at most ``max_encodings`` codings) is undone (gateway/proxy/encoding.py)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise InvalidRequest("Invalid Content-Length header.", code="invalid_header") from None
        if size > limit:
            raise _too_large(limit)
    # Every Content-Encoding line: two lines are one list (RFC 9110 §5.3), not the first line alone.
    codings = content_codings(", ".join(request.headers.getlist("content-encoding")), max_encodings)
    parts: list[bytes] = []
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise _too_large(limit)
            parts.append(chunk)
    except ClientDisconnect:
        raise ClientClosedRequest("The client left before the request was received.") from None
    return await decode_off_loop(b"".join(parts), codings, limit)


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"Request body is larger than the gateway's limit of {limit} bytes.")


def parse_request(
    body: bytes,
    endpoint: Endpoint,
    *,
    max_n: int,
    max_output_tokens: int | None,
    max_depth: int = DEFAULT_MAX_JSON_DEPTH,
) -> ProxiedRequest:
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidRequest("The request body is not valid UTF-8.", code="invalid_encoding") from None
        raise InvalidRequest(
            "We could not parse the JSON body of your request. Send valid JSON.", code="invalid_json"
        ) from None
    if not isinstance(payload, dict):
        raise InvalidRequest("The request body must be a JSON object.", code="invalid_json")
    # Fewer brackets than the limit cannot nest deeper than it: most bodies skip the walk.
    if body.count(b"[") + body.count(b"{") > max_depth and _deeper_than(payload, max_depth):
        raise InvalidRequest(
            f"The JSON body is nested more than {max_depth} levels deep.", code="json_too_deep"
        )

    required = REQUIRED[endpoint]
    if required not in payload:
        raise _missing(required)
    value = payload[required]
    if endpoint in ("chat", "messages") and (not isinstance(value, list) or not value):
        raise InvalidRequest("'messages' must be a non-empty array.", param="messages", code="invalid_type")
    if endpoint == "completions" and not isinstance(value, str | list):
        raise InvalidRequest("'prompt' must be a string or an array.", param="prompt", code="invalid_type")
    if endpoint == "responses" and not isinstance(value, str | list):
        raise InvalidRequest("'input' must be a string or an array.", param="input", code="invalid_type")

    model = payload.get("model")
    if model is None:
        raise _missing("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("'model' must be a non-empty string.", param="model", code="invalid_type")

    stream = payload.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise InvalidRequest("'stream' must be a boolean.", param="stream", code="invalid_type")

    validate_parameters(payload, endpoint)  # before routing, which may drop or adapt some of them
    _check_bounds(payload, endpoint, max_n, max_output_tokens)

    options = payload.get("stream_options")
    client_wants_usage = isinstance(options, dict) and options.get("include_usage") is True
    return ProxiedRequest(endpoint, payload, model, stream, client_wants_usage)


def _deeper_than(payload: dict[str, Any], limit: int) -> bool:
    """Whether ``payload`` nests more than ``limit`` objects and arrays deep (the top level is 1).

    Level by level, without recursion: the walk visits each object and array once, linear in the body
    as orjson's own read is, and stops at the first level past the limit.
    """
    level: list[Any] = [payload]
    for _ in range(limit):
        nested: list[Any] = []
        for node in level:
            values = node.values() if isinstance(node, dict) else node
            nested += [v for v in values if isinstance(v, dict | list)]
        if not nested:
            return False
        level = nested
    return True


def _check_bounds(
    payload: dict[str, Any], endpoint: Endpoint, max_n: int, max_output_tokens: int | None
) -> None:
    n = payload.get("n")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= max_n):
        raise InvalidRequest(f"'n' must be an integer from 1 to {max_n}.", param="n", code="invalid_value")
    if max_output_tokens is None:
        return
    for field in OUTPUT_LIMITS[endpoint]:
        value = payload.get(field)
        if isinstance(value, int) and value > max_output_tokens:
            raise InvalidRequest(
                f"'{field}' must be at most {max_output_tokens} on this gateway.",
                param=field,
                code="invalid_value",
            )


def _missing(name: str) -> InvalidRequest:
    return InvalidRequest(
        f"Missing required parameter: '{name}'.", param=name, code="missing_required_parameter"
    )


def upstream_body(
    request: ProxiedRequest,
    model: str,
    *,
    drop_temperature: bool = False,
    diffusion_max_steps: int | None = None,
) -> bytes:
    """The body for one backend: ``model`` rewritten; on streams, usage always requested; for diffusion,
    an unsupported temperature dropped when the policy adapts it, and a speed tier's step cap set (it
    can only lower a cap the request set itself)."""
    payload = dict(request.payload)  # shallow: each attempt at another backend starts from the original
    payload["model"] = model
    if drop_temperature:
        payload.pop("temperature", None)
    if diffusion_max_steps is not None:
        xargs = dict(payload["vllm_xargs"]) if isinstance(payload.get("vllm_xargs"), dict) else {}
        asked = xargs.get("diffusion_max_steps")
        xargs["diffusion_max_steps"] = (
            min(asked, diffusion_max_steps) if isinstance(asked, int) else diffusion_max_steps
        )
        payload["vllm_xargs"] = xargs
    if request.stream and request.endpoint in ("chat", "completions"):
        # Responses and Messages streams always carry usage, in their last events.
        options = payload.get("stream_options")
        options = dict(options) if isinstance(options, dict) else {}
        options["include_usage"] = True
        payload["stream_options"] = options
    return orjson.dumps(payload)
