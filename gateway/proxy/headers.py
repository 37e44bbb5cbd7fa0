"""Which headers cross the gateway, in each direction.

Towards a backend only an allowlist of the client's headers goes (``FORWARDED``), then the gateway adds its
own, so a client can never inject the backend's credential, an encoding or the gateway's routing headers.
From a backend, an allowlist too (``RELAYED``): a backend can never set or double a header that is the
gateway's to send (``x-gateway-backend``, ``x-request-id``, ``x-ratelimit-*``), nor hand the client
cookies, framing or anything else it invents.
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.upstream.settings import BackendSettings

__all__ = [
    "FORWARDED",
    "RELAYED",
    "REQUEST_ID_HEADER",
    "client_request_id",
    "client_response_headers",
    "upstream_request_headers",
]

REQUEST_ID_HEADER = "x-request-id"

# The only client headers a backend receives: an allowlist, since a denylist lets ``content-encoding``,
# ``api-key``, ``x-original-url`` and any invented header through. Everything else is dropped: credentials
# (the backend gets the gateway's key), framing and encodings (the gateway sends its own, plain, body),
# hop-by-hop headers, and anything addressed to the gateway. ``edge.forward_headers`` adds names.
FORWARDED = frozenset(
    {
        "accept",
        "user-agent",
        # W3C trace context: the backend's spans join the client's trace.
        "traceparent",
        "tracestate",
        # /v1/messages: Anthropic's API version and beta flags select behaviour in vLLM's Messages API.
        "anthropic-version",
        "anthropic-beta",
    }
)

# The only backend response headers a client receives: a backend answers the gateway with a JSON body or
# an SSE stream, and its type is all a client (the OpenAI and Anthropic SDKs) needs from the backend's
# headers. vLLM sends little more: date, server and the framing (content-length, transfer-encoding), which
# the gateway writes itself; the request id, the route, rate limits, retry-after and a stream's
# cache-control are the gateway's own.
RELAYED = frozenset({"content-type"})


def _connection_named(headers: Iterable[tuple[str, str]]) -> set[str]:
    named: set[str] = set()
    for key, value in headers:
        if key.lower() == "connection":
            named.update(token.strip().lower() for token in value.split(",") if token.strip())
    return named


def upstream_request_headers(
    client_headers: Iterable[tuple[str, str]],
    backend: BackendSettings,
    request_id: str,
    allowed: frozenset[str] = FORWARDED,
) -> list[tuple[str, str]]:
    """The allowed client headers (never one that ``Connection`` names hop-by-hop), then the gateway's
    own: the body is always plain JSON the gateway wrote, so no client encoding or length goes along."""
    items = list(client_headers)
    named = _connection_named(items)
    out = [(k, v) for k, v in items if (lk := k.lower()) in allowed and lk not in named]
    out.append(("content-type", "application/json"))
    out.append((REQUEST_ID_HEADER, request_id))
    if backend.api_key is not None:
        out.append(("authorization", "Bearer " + backend.api_key.get_secret_value()))
    return out


def client_response_headers(upstream_headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The backend's headers a client sees: those in ``RELAYED``, each at most once (the first)."""
    out: dict[str, str] = {}
    for key, value in upstream_headers:
        name = key.lower()
        if name in RELAYED and name not in out:
            out[name] = value
    return list(out.items())


# The longest client-sent request id the gateway keeps (it reaches logs and traces).
MAX_CLIENT_REQUEST_ID = 128


def client_request_id(value: str | None) -> str | None:
    """A client's own ``x-request-id``, kept beside the gateway's id when it is at most 128 printable ASCII
    characters, else dropped (None). Never the request's id: a client could otherwise pick another
    tenant's id and have its requests logged, traced and billed under it."""
    if value is None or not 0 < len(value) <= MAX_CLIENT_REQUEST_ID:
        return None
    return value if value.isascii() and value.isprintable() else None
