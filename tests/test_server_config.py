"""One uvicorn configuration for a single process and for ``gateway serve --workers``."""

from __future__ import annotations

import functools
import pickle

from prometheus_client import CollectorRegistry
from starlette.applications import Starlette

from gateway.app import create_worker_app
from gateway.edge.protocol import EdgeProtocol
from gateway.edge.settings import EdgeSettings
from gateway.edge.state import EdgeState
from gateway.server import uvicorn_config
from gateway.telemetry.metrics import Metrics

_SHARED = (
    "lifespan",
    "log_config",
    "access_log",
    "log_level",
    "http",
    "timeout_keep_alive",
    "server_header",
    "date_header",
    "timeout_graceful_shutdown",
)


def test_workers_and_one_process_get_the_same_configuration():
    one = uvicorn_config(Starlette(), "warning")  # no edge state: uvicorn's keep-alive timeout, 5 s
    workers = uvicorn_config(
        functools.partial(create_worker_app, None, "/nonexistent"),
        "warning",
        keepalive_timeout=5,
        loop="uvloop",
        factory=True,
        workers=2,
    )
    assert {k: getattr(one, k) for k in _SHARED} == {k: getattr(workers, k) for k in _SHARED}
    assert one.http is EdgeProtocol and one.access_log is False and one.server_header is False
    assert (one.loop, workers.loop) == ("none", "uvloop")
    assert workers.factory is True and workers.workers == 2
    # The factory reaches each worker process pickled (uvicorn starts them with multiprocessing's spawn).
    factory = pickle.loads(pickle.dumps(workers.app))  # noqa: S301  # our own bytes
    assert factory.func is create_worker_app and factory.args == (None, "/nonexistent")


def test_one_process_closes_idle_connections_at_the_edges_keep_alive_timeout():
    app = Starlette()
    app.edge = EdgeState(  # type: ignore[attr-defined]
        EdgeSettings(keepalive_timeout=0.4), 10, Metrics(CollectorRegistry(), ["b"]), app
    )
    assert uvicorn_config(app, "warning").timeout_keep_alive == 0.4
