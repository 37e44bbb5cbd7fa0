"""A client transport that sends a response's head together with its first body bytes.

uvicorn writes a response's head (status line and headers) and its body in two ``transport.write``
calls, and asyncio sends each at once: two ``send`` syscalls and two TCP segments for an answer that
fits in one. On loopback a send also runs the receiver's side of TCP, so the second syscall is a
measurable share of a small answer's cost (a rejected request on a fresh connection spends a good part
of the gateway's CPU in ``write``). Here a head is held until the next write, which a small
answer makes in the same turn of the event loop; when none comes in that turn (a streamed answer
waiting for its backend) the head goes out alone at the next turn, so nothing is ever delayed by more
than one turn, and the order of the bytes is unchanged.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["HeadHoldingTransport"]

_HEAD = b"HTTP/1.1 "
_INTERIM = b"HTTP/1.1 1"  # "100 Continue": the client waits for it before sending the body


class HeadHoldingTransport(asyncio.Transport):
    """Wraps the connection's transport; everything but ``write`` and the close goes straight to it."""

    __slots__ = ("_flush", "_held", "_inner", "_loop")

    def __init__(self, inner: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = inner
        self._loop = loop
        self._held: bytes | None = None
        self._flush: asyncio.Handle | None = None

    # ---- what changes --------------------------------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._take_held()
        if held is not None:
            self._inner.write(held + bytes(data))
        elif data[:9] == _HEAD and data[:10] != _INTERIM and not self._inner.is_closing():
            self._held = bytes(data)
            self._flush = self._loop.call_soon(self._send_held)
        else:
            self._inner.write(data)

    def _take_held(self) -> bytes | None:
        """The held head, if any, no longer held (and its flush at the next turn cancelled)."""
        held, self._held = self._held, None
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        return held

    def _send_held(self) -> None:
        held = self._take_held()
        if held is not None and not self._inner.is_closing():
            self._inner.write(held)

    def close(self) -> None:
        self._send_held()
        self._inner.close()

    def abort(self) -> None:
        self._take_held()  # dropped: an aborted connection sends nothing more
        self._inner.abort()

    def get_write_buffer_size(self) -> int:
        held = self._held
        return self._inner.get_write_buffer_size() + (len(held) if held is not None else 0)

    # ---- the rest, as the connection's own transport ------------------------------------------------------

    def is_closing(self) -> bool:
        return self._inner.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._inner.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._inner.pause_reading()

    def resume_reading(self) -> None:
        self._inner.resume_reading()

    def is_reading(self) -> bool:
        return self._inner.is_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._inner.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._inner.get_write_buffer_limits()

    def can_write_eof(self) -> bool:
        return self._inner.can_write_eof()

    def write_eof(self) -> None:
        self._send_held()
        self._inner.write_eof()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._inner.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._inner.get_protocol()
