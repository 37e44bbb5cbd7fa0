"""The uvicorn internals the edge protocol (gateway/edge/protocol.py) overrides or reads, pinned.

``EdgeProtocol`` subclasses uvicorn's ``HttpToolsProtocol``: it overrides httptools' parser callbacks and
private methods (``_start_asgi_task``, ``send_400_response``) and reads the protocol's and the request
cycle's attributes. None of that is uvicorn's public API, so pyproject.toml pins uvicorn below its next
minor version, and this file fails, naming what moved, when an upgrade changes any of it: raise the pin
only with this file passing.
"""

from __future__ import annotations

import asyncio
import inspect
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httptools
import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from uvicorn.config import Config
from uvicorn.protocols.http import flow_control
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from gateway.edge.protocol import EdgeProtocol
from tests.test_edge_protocol import Recorder

ROOT = Path(__file__).resolve().parent.parent

# name -> parameters after self, as uvicorn declares them.
_METHODS = {
    "connection_made": ["transport"],
    "connection_lost": ["exc"],
    "data_received": ["data"],
    "send_400_response": ["msg"],
    "on_message_begin": [],
    "on_url": ["url"],
    "on_header": ["name", "value"],
    "on_headers_complete": [],
    "on_body": ["body"],
    "on_message_complete": [],
    "on_response_complete": [],
    "_start_asgi_task": ["cycle", "app"],
    "_unset_keepalive_if_required": [],
    "_should_upgrade": [],
    "pause_writing": [],
    "resume_writing": [],
}
# What the edge reads or sets on a request cycle.
_CYCLE_ATTRIBUTES = (
    "scope",
    "body",
    "more_body",
    "message_event",
    "keep_alive",
    "disconnected",
    "waiting_for_100_continue",
    "response_started",
    "response_complete",
)
# What the edge reads or sets on the protocol once a request has begun.
_PROTOCOL_ATTRIBUTES = (
    "app",
    "loop",
    "transport",
    "flow",
    "client",
    "parser",
    "pipeline",
    "cycle",
    "scope",
    "headers",
    "url",
    "timeout_keep_alive_task",
)


def test_uvicorn_is_pinned_below_its_next_minor_version_and_installed_within_the_pin() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [Requirement(d) for d in dependencies if Requirement(d).name == "uvicorn"]
    uppers = [Version(s.version) for s in pin.specifier if s.operator == "<"]
    assert uppers, f"uvicorn must have an upper bound (the edge overrides its internals): {pin}"
    installed = Version(version("uvicorn"))
    assert installed in pin.specifier, f"uvicorn {installed} is outside {pin.specifier}"
    assert min(uppers) <= Version(f"{installed.major}.{installed.minor + 1}"), "pin below the next minor"


@pytest.mark.parametrize("name", sorted(_METHODS))
def test_the_overridden_methods_keep_their_signatures(name: str) -> None:
    method = getattr(HttpToolsProtocol, name, None)
    assert callable(method), f"uvicorn's HttpToolsProtocol no longer has {name}"
    parameters = list(inspect.signature(method).parameters)
    assert parameters == ["self", *_METHODS[name]], f"{name}{inspect.signature(method)} changed"


def test_uvicorn_does_not_take_the_chunk_callbacks_the_edge_adds() -> None:
    """httptools calls a protocol's ``on_chunk_header`` if it has one: the edge's marks the trailer
    section. Were uvicorn to define it, the override would silently replace uvicorn's."""
    assert not hasattr(HttpToolsProtocol, "on_chunk_header")
    assert not hasattr(HttpToolsProtocol, "on_chunk_complete")
    assert "on_chunk_header" in EdgeProtocol.__dict__


def test_the_cycle_has_what_the_edge_reads() -> None:
    parameters = list(inspect.signature(RequestResponseCycle.__init__).parameters)
    for name in ("scope", "transport", "flow", "message_event", "expect_100_continue", "keep_alive"):
        assert name in parameters, f"RequestResponseCycle no longer takes {name}"
    assert isinstance(flow_control.HIGH_WATER_LIMIT, int)
    assert callable(flow_control.FlowControl.pause_reading)


class _Watched(HttpToolsProtocol):
    """uvicorn's own protocol, recording the hooks the edge relies on being called."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.calls: list[str] = []

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        self.calls.append("_start_asgi_task")
        self.started_cycle = cycle

    def send_400_response(self, msg: str) -> None:
        self.calls.append("send_400_response")
        super().send_400_response(msg)


async def _noop_app(scope: Any, receive: Any, send: Any) -> None:
    return None


def _protocol() -> tuple[_Watched, Recorder]:
    config = Config(_noop_app, log_config=None, lifespan="off")
    config.load()
    protocol = _Watched(config, ServerState(), {}, asyncio.new_event_loop())
    transport = Recorder()
    protocol.connection_made(transport)
    return protocol, transport


def test_the_hooks_are_called_where_the_edge_expects_them() -> None:
    protocol, _ = _protocol()
    try:
        protocol.data_received(b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n")
        # The app starts through _start_asgi_task at the end of the head (the edge defers it to the body).
        assert protocol.calls == ["_start_asgi_task"]
        cycle = protocol.started_cycle
        for name in _CYCLE_ATTRIBUTES:
            assert hasattr(cycle, name), f"RequestResponseCycle no longer has {name}"
        for name in _PROTOCOL_ATTRIBUTES:
            assert hasattr(protocol, name), f"HttpToolsProtocol no longer has {name}"
        # The request's headers list is the scope's: the edge drops a trailer by not appending it.
        assert protocol.headers is protocol.scope["headers"] is cycle.scope["headers"]
        assert protocol.url == b"/x"
    finally:
        protocol.loop.close()


def test_a_parser_error_goes_to_send_400_response() -> None:
    """The edge answers it in JSON there, and stays silent there after its own 431."""
    protocol, transport = _protocol()
    try:
        protocol.data_received(b"GET / HTTP/1.1\r\nBad Header\r\n\r\n")
        assert protocol.calls == ["send_400_response"]
        assert transport.closed
    finally:
        protocol.loop.close()


def test_httptools_hands_fields_to_on_header_and_chunks_to_on_chunk_header() -> None:
    """The parser API the head's bounds count with: whole fields, trailers included, and a callback at
    each chunk's size line, the last one's (before its trailer fields) included."""
    seen: list[str] = []

    class Recorder:
        def on_header(self, name: bytes, value: bytes) -> None:
            seen.append(f"header {name.decode()}")

        def on_headers_complete(self) -> None:
            seen.append("headers_complete")

        def on_chunk_header(self) -> None:
            seen.append("chunk_header")

        def on_body(self, body: bytes) -> None:
            seen.append("body")

        def on_message_complete(self) -> None:
            seen.append("message_complete")

    parser = httptools.HttpRequestParser(Recorder())
    parser.feed_data(
        b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: v\r\n\r\n"
    )
    assert seen == [
        "header Host",
        "header Transfer-Encoding",
        "headers_complete",
        "chunk_header",
        "body",
        "chunk_header",
        "header X-T",
        "message_complete",
    ]
