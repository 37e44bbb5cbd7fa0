"""Which headers cross the gateway, in each direction.

Hop-by-hop headers are dropped in both directions (RFC 9110 §7.6.1): the fixed list plus every header
named in ``Connection``. What the client sent is stripped first, then the gateway adds its own, so a
client can never inject the backend's credential or the gateway's routing headers.
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.config import BackendSettings

__all__ = ["REQUEST_ID_HEADER", "client_response_headers", "upstream_request_headers", "valid_request_id"]

REQUEST_ID_HEADER = "x-request-id"

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "transfer-encoding",
        "upgrade",
        "trailer",
        "proxy-authorization",
        "proxy-authenticate",
    }
)

# Never forwarded upstream: the client's own credentials (the backend gets the gateway's key instead),
# headers the HTTP client recomputes, and anything addressed to the gateway itself.
_REQUEST_DROP = HOP_BY_HOP | {
    "authorization",
    "x-api-key",
    "cookie",
    "host",
    "content-length",
    "accept-encoding",  # the gateway relays bytes; a compressed stream would have to be buffered
    "expect",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    REQUEST_ID_HEADER,
}

# Not copied from the backend's response: framing is the gateway's own, and so is identity.
_RESPONSE_DROP = HOP_BY_HOP | {"content-length", "content-encoding", "server", "date", "set-cookie"}


def _connection_named(headers: Iterable[tuple[str, str]]) -> set[str]:
    named: set[str] = set()
    for key, value in headers:
        if key.lower() == "connection":
            named.update(token.strip().lower() for token in value.split(",") if token.strip())
    return named


def upstream_request_headers(
    client_headers: Iterable[tuple[str, str]], backend: BackendSettings, request_id: str
) -> list[tuple[str, str]]:
    items = list(client_headers)
    drop = _REQUEST_DROP | _connection_named(items)
    out = [(k, v) for k, v in items if (lk := k.lower()) not in drop and not lk.startswith("x-gateway-")]
    out.append(("content-type", "application/json"))
    out.append((REQUEST_ID_HEADER, request_id))
    if backend.api_key is not None:
        out.append(("authorization", "Bearer " + backend.api_key.get_secret_value()))
    return _dedupe_content_type(out)


def _dedupe_content_type(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen = False
    out: list[tuple[str, str]] = []
    for key, value in reversed(headers):
        if key.lower() == "content-type":
            if seen:
                continue
            seen = True
        out.append((key, value))
    out.reverse()
    return out


def client_response_headers(upstream_headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    items = list(upstream_headers)
    drop = _RESPONSE_DROP | _connection_named(items)
    return [(k, v) for k, v in items if k.lower() not in drop and k.lower() != REQUEST_ID_HEADER]


def valid_request_id(value: str | None) -> bool:
    """A client-sent request id is kept only when it is short and plainly printable (it reaches logs)."""
    return (
        value is not None
        and 0 < len(value) <= 128
        and all(c.isascii() and (c.isalnum() or c in "-_.:/=+") for c in value)
    )
