"""uvicorn's httptools protocol with deadlines for receiving a request and a cap on open connections.

uvicorn bounds neither: its keep-alive timer is disarmed by every byte received and is not
armed at all before the first request, so a client that sends half a request line, or headers and then a
byte now and then, holds its connection (and a file descriptor) for ever. Here, per connection:

* a **head deadline**, ``edge.header_timeout``: armed at accept for the first request and at the first
  byte of each later one, cancelled when the headers are complete (Go's ``ReadHeaderTimeout``);
* a **body deadline**, ``edge.body_timeout``: armed when the headers are complete, cancelled when the
  whole body has arrived (an absolute deadline, so a byte a second does not keep it alive);
* when one passes, a ``408`` is written if no response has started, and the connection is closed; a
  response already going out is never cut (its connection closes when it ends instead). Once a request
  has been received nothing here runs: long streamed answers are untouched;
* a **send deadline**, ``edge.send_timeout``: armed when the transport's write buffer is full (writing
  paused) or a response ends with bytes still buffered; when it passes with no progress (the buffer has
  not shrunk) the connection is aborted. A client that stops reading is closed, one that reads slowly is
  not. Without it a small answer to a client that never reads kept its connection for ever: uvicorn's
  close after the keep-alive timeout waits for the buffer to drain, which never happens;
* a **cap** on open connections (``EdgeState.admit``): past it a new connection gets a 503 without being
  read and is closed, while established ones carry on. The operator listener has its own cap;
* a request **body handed to the app whole** (``on_body``), not a wake-up of the app per piece;
* the app **started once the body is in** (``_start_asgi_task``), as nginx buffers a request before it
  proxies it: a body that never arrives costs the gateway no task, no authentication, no log line;
* the **keep-alive timer cancelled on every close** (``connection_lost``), a reset included: uvicorn
  cancels it on a clean close only, and the timer kept a dead connection's objects for the collector;
* **bounds on a request's head** (``edge.max_header_bytes``, ``max_headers``, ``max_header_line_bytes``;
  counted by gateway/edge/head.py): past one the client gets a 431 and the connection is closed, with
  nothing more parsed or kept (``_fields_too_large``);
* **chunked trailer fields dropped** (``on_header`` after the head): uvicorn appended them to the
  request's headers, where ``Authorization``, ``x-gateway-route`` or ``Content-Encoding`` sent after the
  body counted as if sent before it (RFC 9110 §6.5.1 forbids merging a trailer field into the header
  section unless its definition says how; none of the gateway's does). They are discarded, as §6.5.1
  allows, rather than refused: the gateway re-frames every body it forwards, so a trailer reaches no
  backend either way, and a client adding one (a checksum) is not turned away. They still count against
  the head's bounds;
* a **400 for a request httptools cannot parse** in the gateway's JSON error envelope, not uvicorn's
  plain text.

The request deadlines share one timer per event loop (gateway/edge/deadlines.py): arming and disarming
one is a set operation, nothing per byte.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from gateway.edge.deadlines import Deadlines
from gateway.edge.head import HeadBounds
from gateway.edge.state import EdgeState, edge_of
from gateway.edge.transport import HeadHoldingTransport
from gateway.errors import error_body

__all__ = ["EdgeProtocol"]


def _raw_response(status: bytes, code: str, message: str) -> bytes:
    body = error_body(message, "invalid_request_error" if status.startswith(b"4") else "server_error", code)
    head = (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: application/json\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\nconnection: close\r\n\r\n"
    )
    return head + body


_TIMEOUT_408 = _raw_response(
    b"408 Request Timeout", "request_timeout", "The request was not received in time."
)
_REFUSED_503 = _raw_response(
    b"503 Service Unavailable", "too_many_connections", "The gateway has too many open connections."
)
_TOO_LARGE = b"431 Request Header Fields Too Large"
_INVALID_400 = _raw_response(b"400 Bad Request", "invalid_http", "Invalid HTTP request received.")


def _host(address: Any) -> str | None:
    """The host of a socket address as asyncio and uvicorn give it (a tuple; None for a Unix socket)."""
    return str(address[0]) if isinstance(address, tuple) and address else None


class EdgeProtocol(HttpToolsProtocol):
    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.edge: EdgeState | None = edge_of(self.app)
        self._deadlines: Deadlines | None = None if self.edge is None else self.edge.deadlines(self.loop)
        self._slot: int | None = None  # the request deadline's slot in _deadlines, while armed
        self._stalled: asyncio.TimerHandle | None = None
        self._unsent = 0  # the write buffer's size when the send deadline was armed
        self._phase = ""
        self._listener: str | None = None  # set once the connection is counted in
        self._refused = False
        # A request whose app waits for its body to arrive (at most one: see _start_asgi_task).
        self._waiting: tuple[RequestResponseCycle, Any] | None = None
        # The head's bounds; None without an edge (uvicorn's behaviour).
        self._head: HeadBounds | None = None if self.edge is None else HeadBounds(self.edge.settings)
        self._shut = False  # refused with a 431: nothing more is parsed

    # ---- the connection ---------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        edge = self.edge
        if edge is None:
            super().connection_made(transport)
            return
        sockname = transport.get_extra_info("sockname")
        port = sockname[1] if isinstance(sockname, tuple) and len(sockname) >= 2 else None
        listener = edge.listener(port)
        if not edge.admit(listener):
            # Refused before a byte is read: cheap, and the established connections are unaffected. The
            # address is looked up only here (an admitted connection's is uvicorn's self.client).
            edge.refused(listener, _host(transport.get_extra_info("peername")))
            self._refused = True
            self.transport = transport
            transport.write(_REFUSED_503)
            transport.close()
            return
        self._listener = listener
        # A small answer's head and body in one send (gateway/edge/transport.py).
        super().connection_made(HeadHoldingTransport(transport, self.loop))
        if listener == "operator":
            self.app = edge.operator_app
        self._arm("header", edge.settings.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._disarm()
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None
        if self._listener is not None and self.edge is not None:
            self.edge.release(self._listener)
            self._listener = None
        self._waiting = None  # its client left before the body was in: nothing to answer
        super().connection_lost(exc)
        # uvicorn cancels the keep-alive timer only when the connection closed cleanly (exc is None). A
        # client that resets an idle kept-alive connection (ECONNRESET: what an HTTP client pool does
        # when it drops a connection) left the timer in the loop's heap, holding this protocol, its
        # last request and that request's record for up to keepalive_timeout, and then, the fired
        # handle still pointing back at the protocol, as a reference cycle that only the garbage
        # collector frees: thousands of dead connections' objects between two full collections (and
        # their memory kept by the allocator, which a soak shows as RSS growth).
        self._unset_keepalive_if_required()

    def data_received(self, data: bytes) -> None:
        if self._refused or self._shut:
            return
        head = self._head
        if head is None:
            super().data_received(data)
            return
        head.read_starts()
        super().data_received(data)
        if not self._shut and not self.transport.is_closing():
            self._check(head.received(data))

    def send_400_response(self, msg: str) -> None:
        # uvicorn answers a request httptools cannot parse in plain text; the gateway's clients read the
        # JSON error envelope on every path. The message is uvicorn's own, fixed text (never the input).
        if self.edge is None:
            super().send_400_response(msg)
            return
        if self._shut:
            return  # the parser stumbled on what followed a refused head: the 431 is the answer
        self.transport.write(_INVALID_400)
        self.transport.close()

    # ---- the request's phases ------------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._shut:
            return
        super().on_message_begin()
        if self._head is None or self.edge is None:
            return
        self._head.message_begins()
        # The first request's head deadline runs from accept; a later one's from its first byte.
        if self._slot is None:
            self._arm("header", self.edge.settings.header_timeout)

    def on_url(self, url: bytes) -> None:
        if self._shut:
            return
        super().on_url(url)
        if self._head is not None:
            self._check(self._head.target(len(url), len(self.url)))

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._shut:
            return
        head = self._head
        # A trailer field (the section after the body) is counted, then dropped.
        if head is None or (not self._check(head.field(name, value)) and head.section == "head"):
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._shut:
            return
        if self._head is not None:
            self._head.headers_complete()
        super().on_headers_complete()
        if self.edge is not None:
            self._arm("body", self.edge.settings.body_timeout)

    def on_chunk_header(self) -> None:
        # A chunk's size line has ended: its data follows (on_body), or after the last chunk, trailer fields.
        if self._head is not None and not self._shut:
            self._head.chunk_header()

    def on_body(self, body: bytes) -> None:
        if self._shut:
            return
        if self._head is not None:
            self._head.body()
        cycle = self.cycle
        if (
            self.edge is None
            or cycle.response_complete
            or (self.parser.should_upgrade() and self._should_upgrade())
        ):
            super().on_body(body)
            return
        # uvicorn wakes the app for every piece of body that arrives; the gateway reads a body whole (it is
        # JSON), so a body sent a byte at a time woke the app, and ran starlette's receive chain, for each
        # byte. The app is woken when the body is complete (on_message_complete), when the buffer reaches
        # uvicorn's high-water mark (reading pauses until the app drains it), or when the client leaves.
        cycle.body += body
        if len(cycle.body) > HIGH_WATER_LIMIT:
            self.flow.pause_reading()
            cycle.message_event.set()
            self._start_waiting()  # a large body: the app reads it in parts (and may refuse it early)

    def on_message_complete(self) -> None:
        if self._shut:
            return
        if self._head is not None:
            self._head.message_complete()
        super().on_message_complete()
        self._disarm()
        self._start_waiting()

    def _check(self, refusal: str | None) -> bool:
        """Refuse the request if the head's count says so (``refusal``: why); whether it was refused."""
        if refusal is None:
            return False
        self._fields_too_large(refusal)
        return True

    def _fields_too_large(self, message: str) -> None:
        """Refuse the request whose head is past a bound: a 431, and nothing more parsed or buffered."""
        self._shut = True
        edge = self.edge
        transport = self.transport
        if edge is None or transport is None:
            return
        edge.fields_too_large(_host(self.client))
        cycle = self.cycle  # the request being read once its head is complete (trailers), else the last one
        ours = cycle is not None and cycle.scope is self.scope
        if cycle is not None and not ours and not cycle.response_complete:
            # An earlier request's response is yet to go out, or is going out (pipelining): nothing may be
            # written before it, and it is never cut; the connection closes when it ends. The head deadline
            # goes too: its 408 could not be written first either.
            cycle.keep_alive = False
            self.flow.pause_reading()
            self._disarm()
            return
        self._disarm()
        self._waiting = None  # its app never starts
        if ours and cycle is not None and not cycle.response_complete:
            # An app already reading this body (Expect: 100-continue, a large body) sees the client gone:
            # the body's end will never be parsed.
            cycle.disconnected = True
            cycle.message_event.set()
        if cycle is None or not ours or not cycle.response_started:
            transport.write(_raw_response(_TOO_LARGE, "request_header_fields_too_large", message))
        transport.close()

    # ---- starting the app ----------------------------------------------------------------------------------

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        # uvicorn starts the app as soon as the headers are in (on_headers_complete, or on_response_complete
        # for a pipelined request). A client that then trickles its body, or never sends it, cost a task
        # running the whole middleware chain and authentication, waiting, and at the deadline a 499 in the
        # request log and the usage ledger: a log line and a database row per slow connection an attacker
        # opens. Here the app starts when the body is complete (on_message_complete: in the same read for
        # almost every request, head and body arrive together), when it passes the high-water mark, or
        # never, if the client leaves or its body deadline passes first (408, counted at the edge).
        # Not for `Expect: 100-continue`: that client sends its body only once the app asks for it.
        if self.edge is None or not cycle.more_body or cycle.waiting_for_100_continue:
            super()._start_asgi_task(cycle, app)
            return
        if self._waiting is not None:  # cannot happen (one request is read at a time), but never lose one
            self._start_waiting()
        self._waiting = (cycle, app)

    def _start_waiting(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            super()._start_asgi_task(*waiting)

    # ---- writing to a client that does not read ----------------------------------------------------------

    def pause_writing(self) -> None:
        super().pause_writing()
        self._watch_sending()

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The answer may sit in the write buffer (below the pause mark) for a client that reads nothing.
        if self.transport is not None and self.transport.get_write_buffer_size():
            self._watch_sending()

    def _watch_sending(self) -> None:
        if self.edge is not None and self._stalled is None and self.transport is not None:
            self._unsent = self.transport.get_write_buffer_size()
            self._stalled = self.loop.call_later(self.edge.settings.send_timeout, self._check_sending)

    def _check_sending(self) -> None:
        self._stalled = None
        transport = self.transport
        if self.edge is None or transport is None or self._listener is None:
            return  # the connection is gone
        unsent = transport.get_write_buffer_size()
        if unsent == 0:
            return
        if unsent < self._unsent:
            self._watch_sending()  # the client reads, however slowly: it gets another period
            return
        self.edge.closed_by_deadline("send", _host(self.client))
        # The answer cannot be delivered; aborting (close would wait for the buffer to drain) is what
        # frees the connection and stops a backend stream (the relay sees the disconnect).
        transport.abort()

    # ---- the deadline -------------------------------------------------------------------------------------

    def _arm(self, phase: str, seconds: float) -> None:
        deadlines = self._deadlines
        if deadlines is None:
            return
        if self._slot is not None:
            deadlines.disarm(self, self._slot)
        self._phase = phase
        self._slot = deadlines.arm(self, seconds)

    def _disarm(self) -> None:
        if self._slot is not None and self._deadlines is not None:
            self._deadlines.disarm(self, self._slot)
            self._slot = None

    def deadline_passed(self) -> None:
        self._slot = None
        transport = self.transport
        if transport is None or transport.is_closing() or self.edge is None:
            return
        if self.pipeline:
            # A pipelined request waits behind an earlier one whose response is going out (uvicorn reads
            # no further until it ends): nothing may be written now. Checked again shortly; the wait is
            # bounded by that response.
            self._arm(self._phase, 1.0)
            return
        cycle = self.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            # A response is going out (a pipelined request's, or an early answer while the body trickles
            # in): never cut it; the connection closes when it ends.
            cycle.keep_alive = False
            return
        self.edge.closed_by_deadline(self._phase, _host(self.client))
        self._waiting = None  # a body that did not arrive in time: its app never starts
        if cycle is not None and not cycle.response_complete:
            # The app waiting for this body sees the client gone; anything it sends is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
        if (
            cycle is None
            or not cycle.response_started
            or (cycle.response_complete and self._phase == "header")
        ):
            transport.write(_TIMEOUT_408)
        transport.close()
