"""Request bodies sent with ``Content-Encoding`` (RFC 9110 §8.4): gzip and deflate are decoded, with the
decoded size capped as the body itself is, so a decompression bomb costs the gateway at most the cap.

Anything else is refused with 415 (RFC 9110 §15.5.16). Brotli and zstd would need a library the gateway
does not otherwise depend on; clients fall back to gzip or to no encoding. The backend always receives
the plain JSON the gateway wrote, never the client's encoding header (gateway/proxy/headers.py).

The codings are checked before the body is read: at most ``edge.max_body_encodings`` layers (identity
aside), since each is a decompression up to the cap and a body stacked a thousand deep cost seconds of CPU
for a few megabytes sent. Decoding runs on a small pool of threads (zlib lets go of the GIL while it
inflates), never on the event loop: a large body being decoded does not hold up health probes or other
requests.
"""

from __future__ import annotations

import asyncio
import zlib
from concurrent.futures import ThreadPoolExecutor

from gateway.errors import InvalidRequest, PayloadTooLarge, UnsupportedMediaType

__all__ = ["SUPPORTED", "content_codings", "decode_body", "decode_off_loop"]

SUPPORTED = ("gzip", "deflate")
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_WBITS = -zlib.MAX_WBITS
# Two threads per worker process: decoding takes at most two cores' worth of CPU, however many encoded
# bodies arrive at once (the rest wait their turn), and the event loop keeps its own.
_DECODERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gateway-decode")
_ACCEPTED = {"accept-encoding": ", ".join(SUPPORTED)}  # RFC 9110 §12.5.3 on a 415


def content_codings(content_encoding: str | None, most: int) -> tuple[str, ...]:
    """The codings of a ``Content-Encoding`` value (its header lines joined by commas), in the order they
    were applied, ``identity`` left out; a 415 for a coding the gateway does not decode or for more than
    ``most`` of them."""
    if not content_encoding:
        return ()
    codings: list[str] = []
    for token in content_encoding.split(","):
        coding = token.strip().lower()
        if not coding or coding == "identity":
            continue
        if coding == "x-gzip":
            coding = "gzip"
        if coding not in SUPPORTED:
            raise UnsupportedMediaType(
                f"Content-Encoding {coding[:40]!r} is not supported; use gzip, deflate or none.",
                headers=_ACCEPTED,
            )
        codings.append(coding)
        if len(codings) > most:
            raise UnsupportedMediaType(
                f"Content-Encoding lists more than {most} codings; the gateway decodes at most {most}.",
                code="too_many_encodings",
                headers=_ACCEPTED,
            )
    return tuple(codings)


def decode_body(body: bytes, codings: tuple[str, ...], limit: int) -> bytes:
    """The body with every coding undone, last applied first; at most ``limit`` bytes."""
    for coding in reversed(codings):
        if coding == "gzip":
            body = _inflate(body, _GZIP_WBITS, limit, "gzip")
        else:
            # "deflate" is the zlib format (RFC 9110 §8.4.1.2); some clients send raw deflate anyway.
            try:
                body = _inflate(body, _ZLIB_WBITS, limit, "deflate")
            except InvalidRequest:
                body = _inflate(body, _RAW_WBITS, limit, "deflate")
    return body


async def decode_off_loop(body: bytes, codings: tuple[str, ...], limit: int) -> bytes:
    """:func:`decode_body` on the decoding threads; the body as it is when there is nothing to undo."""
    if not codings:
        return body
    return await asyncio.get_running_loop().run_in_executor(_DECODERS, decode_body, body, codings, limit)


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
