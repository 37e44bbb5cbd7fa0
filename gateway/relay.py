"""Relaying to a client that may hang up at any moment.

A client that disconnects makes the gateway close the upstream request at once, streaming or not
(docs/peers.md #1: LiteLLM keeps generating for clients that left). Both helpers race the work against the
ASGI ``http.disconnect`` message instead of noticing the disconnect only at the next write, because a
diffusion backend can be silent for a whole canvas.

A shared leaf beside ``gateway.errors``: the proxy relays backends' answers with it, and the simulator
cancels its simulated work with it when the gateway hangs up, as vLLM does; it imports nothing else from
the package.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from gateway.errors import ClientDisconnected

__all__ = ["ClientDisconnected", "RelayStreamResponse", "cancel_on_disconnect"]

T = TypeVar("T")


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def cancel_on_disconnect(receive: Receive, work: Awaitable[T]) -> T:
    """Await ``work``; if the client disconnects first, cancel it and raise ClientDisconnected.

    Only valid once the request body has been read in full: the next ASGI message is then the disconnect.
    The work runs in the calling task; one watcher task cancels that task when the client leaves (one
    task per request rather than two, on the hot path).
    """
    current = asyncio.current_task()
    assert current is not None
    left = False

    async def watch() -> None:
        nonlocal left
        await _wait_for_disconnect(receive)
        left = True
        current.cancel()

    watcher = asyncio.ensure_future(watch())
    try:
        return await work
    except asyncio.CancelledError:
        if left:
            current.uncancel()  # the cancellation was ours, and is now a ClientDisconnected
            raise ClientDisconnected from None
        raise
    finally:
        watcher.cancel()


class RelayStreamResponse(Response):
    """An SSE response whose body is pulled from ``body``; a disconnect cancels the pull at once.

    ``on_end(disconnected)`` runs exactly once, after the body iterator is closed. A Response subclass only
    so that frameworks pass it through as a response; it renders nothing up front.
    """

    def __init__(
        self,
        body: AsyncIterator[bytes],
        *,
        status: int,
        headers: list[tuple[str, str]],
        on_end: Callable[[bool], None],
    ) -> None:
        super().__init__(status_code=status)
        self.source = body
        self.raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        self._on_end = on_end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The body is pumped in this task (a second task cost a turn of the event loop before the first
        # byte, while the rest of the backend's stream was being parsed); one watcher cancels it when the
        # client leaves.
        disconnected = False
        try:
            await cancel_on_disconnect(receive, self._pump(send))
        except (ClientDisconnected, OSError):  # left while we waited, or the write failed: gone either way
            disconnected = True
        finally:
            aclose = getattr(self.source, "aclose", None)
            if aclose is not None:
                await aclose()
            self._on_end(disconnected)

    async def _pump(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        async for chunk in self.source:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
