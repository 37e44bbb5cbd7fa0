"""The ``edge:`` section: what a client may cost the gateway before it has authenticated."""

from __future__ import annotations

import re
import resource

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["EdgeSettings", "file_limit"]

# Descriptors kept out of the derived connection cap besides the upstream pool: the listening sockets,
# log and key files, Redis, the JWKS client, the operator listener's own connections.
_RESERVED_DESCRIPTORS = 128


_TOKEN = re.compile(r"^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$")
_NEVER_FORWARDED = frozenset(
    {
        "authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "host",
        "content-length",
        "content-type",
        "content-encoding",
        "transfer-encoding",
        "accept-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "forwarded",
        "x-forwarded-for",
        "x-forwarded-host",
        "x-forwarded-proto",
        "x-real-ip",
        "x-request-id",
    }
)


class EdgeSettings(BaseModel):
    """Seconds and counts. Deadlines cover receiving a request only; a response is never cut by them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The request line and headers must be complete within this, counted from accept for a new connection
    # and from the first byte of each later request on a kept-alive one (Go's ReadHeaderTimeout, nginx's
    # client_header_timeout). Past it the connection gets a 408 and is closed.
    header_timeout: float = Field(10.0, gt=0, le=600)
    # The whole body must arrive within this once the headers are complete (nginx's client_body_timeout
    # is per read; an absolute deadline also stops a client that sends a byte a second).
    body_timeout: float = Field(60.0, gt=0, le=3600)
    # A client that takes none of its answer for this long while the gateway has more to write (the
    # socket's buffers are full) is closed: it holds a backend stream it does not read (nginx's
    # send_timeout). A client that reads, however slowly, is never cut.
    send_timeout: float = Field(60.0, gt=0, le=3600)
    # A request's head (request line and header fields, and any chunked trailer fields) is bounded while
    # it is read, before authentication: past one of these the client gets a 431 and the connection is
    # closed, nothing more buffered. Without them uvicorn kept every header line a client sent for the
    # whole header deadline. Bytes: the request target and each field's name and value as the parser
    # hands them over; a line still unfinished counts as it arrives (one endless value is cut at the
    # line bound, not at the deadline).
    max_header_bytes: int = Field(64 * 1024, ge=1024, le=1024 * 1024)
    # Header fields (trailer fields included): a flood of tiny lines is cut here, long before the bytes.
    max_headers: int = Field(100, ge=8, le=1000)
    # One line: the request target (the URL), or one header field's name and value.
    max_header_line_bytes: int = Field(8 * 1024, ge=256, le=1024 * 1024)
    # Content-Encoding layers undone on a request body (``gzip`` and ``deflate``; ``identity`` does not
    # count); more get a 415. Each layer is a decompression up to the body limit, so a body stacked a
    # thousand times deep cost seconds of CPU for a few megabytes sent.
    max_body_encodings: int = Field(2, ge=1, le=8)
    # A kept-alive connection with no request in progress is closed after this (uvicorn's default is 5).
    keepalive_timeout: float = Field(5.0, gt=0, le=600)
    # Open client connections on the main listener, per worker process; None: derived from the file
    # limit (RLIMIT_NOFILE) minus the upstream pool and some headroom. Past it, new ones are closed at once.
    max_connections: int | None = Field(None, ge=1, le=1_000_000)
    # A separate listener for /healthz, /readyz and /metrics only (nothing else is served there), with its
    # own small cap: reachable when the main listener is full. Bind it where only operators reach it.
    operator_host: str = "127.0.0.1"
    operator_port: int | None = Field(None, ge=0, le=65535)
    # The operator listener's own cap: a scraper and a probe or two, never the clients' load.
    operator_max_connections: int = Field(32, ge=1, le=10_000)
    # An upstream answer larger than this is not relayed: 502 before the first byte, an in-band error
    # after it (bytes as they come from the backend, SSE framing included).
    max_upstream_response_bytes: int = Field(64 * 1024 * 1024, ge=64 * 1024)
    # Client headers forwarded to backends besides the built-in allowlist (gateway/proxy/headers.py),
    # lower case; credentials, framing, encodings and hop-by-hop headers can never be added.
    forward_headers: frozenset[str] = frozenset()

    @field_validator("forward_headers")
    @classmethod
    def _forwardable(cls, value: frozenset[str]) -> frozenset[str]:
        for name in value:
            if not _TOKEN.match(name):
                raise ValueError(f"{name!r} is not a lower-case header name")
            if name in _NEVER_FORWARDED or name.startswith(("x-gateway-", "proxy-")):
                raise ValueError(f"{name!r} is never forwarded to a backend")
        return value

    @model_validator(mode="after")
    def _line_within_head(self) -> EdgeSettings:
        if self.max_header_line_bytes > self.max_header_bytes:
            raise ValueError("max_header_line_bytes must not exceed max_header_bytes")
        return self

    def connection_cap(self, upstream_pool: int) -> int:
        """The cap on client connections: configured, or what the file limit leaves beside upstreams."""
        if self.max_connections is not None:
            return self.max_connections
        return max(64, file_limit() - upstream_pool - _RESERVED_DESCRIPTORS)


def file_limit() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1_048_576
