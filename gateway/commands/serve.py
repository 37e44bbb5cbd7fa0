"""``gateway serve``: the gateway in this process, or in several uvicorn workers sharing its sockets."""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from gateway.config import CONFIG_ENV_VAR, ConfigError, Settings, load_settings
from gateway.server import address, bind, run, serve, uvicorn_config
from gateway.telemetry.logs import configure_logging

__all__ = ["add_parser", "port_number"]

log = logging.getLogger("gateway.server")

# prometheus-client's multiprocess mode: the directory each worker writes its metrics to, read by the
# library from the environment only.
_METRICS_DIR_VAR = "PROMETHEUS_MULTIPROC_DIR"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the gateway")
    p.add_argument("--config", type=Path, help="YAML configuration (default: $GATEWAY_CONFIG)")
    p.add_argument("--port", type=port_number, help="listen on this port instead of server.port")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes; limits and metrics stay whole with state.redis_url",
    )
    p.set_defaults(func=_serve)


def port_number(text: str) -> int:
    """--port: 0 (any free port, logged once bound) to 65535."""
    if not (text.isascii() and text.isdigit()) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"a port number from 0 to 65535, not {text[:20]!r}")
    return int(text)


def _serve(args: argparse.Namespace) -> int:
    from gateway.app import create_app

    settings = load_settings(args.config)
    if args.port is not None:
        settings = settings.model_copy(
            update={"server": settings.server.model_copy(update={"port": args.port})}
        )
    configure_logging(settings.server.log_level)
    if args.workers > 1:
        return _serve_workers(args, settings)
    # Bound before the app is built, so a busy port is reported before anything else starts.
    sockets = _sockets(settings)
    app = create_app(settings)
    if len(sockets) > 1:
        app.edge.operator_ports.add(sockets[1].getsockname()[1])
    _log_start(args.config, sockets)
    run(serve([(app, sockets)], settings.server.log_level), settings.server.loop)
    return 0


def _sockets(settings: Settings) -> list[socket.socket]:
    """The main listener, then the operator listener (edge.operator_port) when one is set: /healthz,
    /readyz and /metrics, reachable when the main listener is at its connection cap."""
    server, edge = settings.server, settings.edge
    sockets = [bind(server.host, server.port, hint="choose another port with --port or server.port")]
    if edge.operator_port is not None:
        hint = "choose another port with edge.operator_port"
        sockets.append(bind(edge.operator_host, edge.operator_port, hint=hint))
    return sockets


def _log_start(config: Path | None, sockets: list[socket.socket]) -> None:
    """Where the configuration came from and where the gateway listens: the first lines a newcomer reads,
    and the ones that tell an operator which file and which port a running gateway has."""
    source = config if config is not None else Path(os.environ[CONFIG_ENV_VAR])
    log.info(
        "configuration read from %s", source.resolve(), extra={"fields": {"config": str(source.resolve())}}
    )
    for listener, sock in zip(("main", "operator"), sockets, strict=False):
        host, port = sock.getsockname()[:2]
        url = f"http://{address(host, port)}"
        log.info(
            "listening on %s (%s listener)",
            url,
            listener,
            extra={"fields": {"url": url, "listener": listener}},
        )


def _serve_workers(args: argparse.Namespace, settings: Settings) -> int:
    """Several uvicorn workers on one socket. Each is handed the configuration file and the metrics
    directory; Prometheus metrics are aggregated across them with prometheus-client's multiprocess mode."""
    from uvicorn.supervisors import Multiprocess

    from gateway.app import create_worker_app

    if settings.state.redis_url is None:
        print(
            "gateway: warning: several workers without state.redis_url: limits and counts are per worker",
            file=sys.stderr,
        )
    if (status := _validate_elsewhere(args.config)) != 0:
        return status
    if settings.edge.operator_port == 0:
        raise ConfigError("edge.operator_port: several workers need a fixed port, not 0")
    # An operator's own directory (say a Kubernetes emptyDir) is used as it is; else a fresh one.
    given = os.environ.get(_METRICS_DIR_VAR)
    metrics_dir = given or tempfile.mkdtemp(prefix="gateway-metrics-")
    config_file = Path(args.config).resolve() if args.config is not None else None
    # The same configuration as one process (gateway.server), so the edge's protocol too: each worker
    # finds its own edge state (its connection cap is per process, as the file limit it is derived from).
    config = uvicorn_config(
        functools.partial(create_worker_app, config_file, metrics_dir),
        settings.server.log_level,
        keepalive_timeout=settings.edge.keepalive_timeout,
        loop=settings.server.loop,
        factory=True,
        workers=args.workers,
    )
    # Bound here and handed to every worker, the operator listener's too (uvicorn.run binds only one).
    sockets = _sockets(settings)
    _log_start(args.config, sockets)
    try:
        with _workers_environment(metrics_dir):
            Multiprocess(config, sockets=sockets).run()
    finally:
        if not given:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def _validate_elsewhere(config: Path | None) -> int:
    """``gateway check-config`` in a process of its own, before any worker starts, so bad key files or JWT
    material fail with a clear error. Not in this process: with an operator's metrics directory in the
    environment, the app built to validate would write its metrics there, and this process stays alive, so
    a live-summed gauge such as gateway_connections_limit would count it as one more worker. Its
    environment is this one without that directory; its error, if any, goes to this stderr."""
    command = [sys.executable, "-m", "gateway", "check-config"]
    if config is not None:
        command += ["--config", str(config)]
    environment = {k: v for k, v in os.environ.items() if k != _METRICS_DIR_VAR}
    # This interpreter and a fixed command; the one argument is the operator's own --config path.
    return subprocess.run(command, env=environment, stdout=subprocess.DEVNULL, check=False).returncode  # noqa: S603


@contextlib.contextmanager
def _workers_environment(metrics_dir: str) -> Iterator[None]:
    """The metrics directory in the environment the workers start with, for as long as they run.

    The one environment write left: prometheus-client reads its multiprocess directory only
    from the environment, and it is imported by a worker before any of its code runs (unpickling its
    configuration imports the edge protocol), so the variable must be inherited; uvicorn starts workers
    with multiprocessing, whose children take this process's environment and no other. Restored after."""
    if os.environ.get(_METRICS_DIR_VAR) == metrics_dir:
        yield  # the operator's own: already there
        return
    os.environ[_METRICS_DIR_VAR] = metrics_dir
    try:
        yield
    finally:
        del os.environ[_METRICS_DIR_VAR]
