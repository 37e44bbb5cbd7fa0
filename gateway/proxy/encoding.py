"""Request bodies sent with ``Content-Encoding`` (RFC 9110 §8.4): gzip and deflate are decoded, with the
decoded size capped as the body itself is, so a decompression bomb costs the gateway at most the cap.

Anything else is refused with 415 (RFC 9110 §15.5.16). Brotli and zstd would need a library the gateway
does not otherwise depend on; clients fall back to gzip or to no encoding. The backend always receives
the plain JSON the gateway wrote, never the client's encoding header (gateway/proxy/headers.py).
"""

from __future__ import annotations

import zlib

from gateway.errors import InvalidRequest, PayloadTooLarge, UnsupportedMediaType

__all__ = ["SUPPORTED", "decode_body"]

SUPPORTED = ("gzip", "deflate")
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_WBITS = -zlib.MAX_WBITS


def decode_body(body: bytes, content_encoding: str | None, limit: int) -> bytes:
    """The body with every listed coding undone, last applied first; at most ``limit`` bytes."""
    if not content_encoding:
        return body
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    for coding in reversed(codings):
        if coding == "identity":
            continue
        if coding in ("gzip", "x-gzip"):
            body = _inflate(body, _GZIP_WBITS, limit, "gzip")
        elif coding == "deflate":
            # "deflate" is the zlib format (RFC 9110 §8.4.1.2); some clients send raw deflate anyway.
            try:
                body = _inflate(body, _ZLIB_WBITS, limit, "deflate")
            except InvalidRequest:
                body = _inflate(body, _RAW_WBITS, limit, "deflate")
        else:
            raise UnsupportedMediaType(
                f"Content-Encoding {coding[:40]!r} is not supported; use gzip, deflate or none.",
                headers={"accept-encoding": ", ".join(SUPPORTED)},  # RFC 9110 §12.5.3 on a 415
            )
    return body


def _inflate(data: bytes, wbits: int, limit: int, name: str) -> bytes:
    decoder = zlib.decompressobj(wbits)
    try:
        # max_length stops the output one byte past the limit, whatever the input expands to.
        out = decoder.decompress(data, limit + 1)
    except zlib.error:
        raise _invalid(name) from None
    if len(out) > limit:
        raise PayloadTooLarge(
            f"The decoded request body is larger than the gateway's limit of {limit} bytes.",
            code="request_too_large",
        )
    if not decoder.eof or decoder.unused_data:
        raise _invalid(name)  # truncated, or bytes after the end of the compressed data
    return out


def _invalid(name: str) -> InvalidRequest:
    return InvalidRequest(f"The request body is not valid {name} data.", code="invalid_encoding")
