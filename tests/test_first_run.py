"""What a newcomer meets first, as processes a user starts: a port already taken, no configuration at all,
the lines `gateway serve` starts with, and `gateway demo --verbose` showing its request log."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.cli import main
from tests.redis_support import free_port
from tests.support import checkout_env, write_key


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port with a listener on it, as another program's would be."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def gateway(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in checkout_env().items() if k != "GATEWAY_CONFIG"}
    return subprocess.run(
        [sys.executable, "-m", "gateway", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def write_config(tmp_path: Path, port: int, **sections: object) -> Path:
    write_key(tmp_path / "keys.yaml", "first")
    config = {
        "server": {"host": "127.0.0.1", "port": port},
        "backends": [{"name": "d", "kind": "diffusion", "url": "http://127.0.0.1:9", "model": "m"}],
        "auth": {"keys_file": "keys.yaml"},
        "usage": {"url": "sqlite:///usage.db"},
        **sections,
    }
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        (["demo", "--port", "{port}"], "--port"),
        (["demo", "--port", "0", "--backend-ports", "{port},0"], "--backend-ports"),
        (["serve", "--config", "gateway.yaml"], "--port"),
        (["serve", "--config", "gateway.yaml", "--port", "0"], "edge.operator_port"),
    ],
    ids=["demo", "demo-backend", "serve", "serve-operator"],
)
def test_a_port_in_use_is_one_line_naming_the_address_and_exit_2(tmp_path, taken_port, command, hint):
    write_config(tmp_path, taken_port, edge={"operator_port": taken_port})
    result = gateway(*(part.format(port=taken_port) for part in command), cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        f"gateway: cannot listen on 127.0.0.1:{taken_port}: the port is already in use"
    )
    assert hint in lines[0]


def test_serve_without_a_configuration_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GATEWAY_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["serve"]) == 2
    assert capsys.readouterr().err == "gateway: no configuration given: pass --config or set GATEWAY_CONFIG\n"


class Running:
    """A gateway command left running, its stdout and stderr read line by line in threads."""

    def __init__(self, *args: str, cwd: Path) -> None:
        env = {k: v for k, v in checkout_env().items() if k != "GATEWAY_CONFIG"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stdout: queue.Queue[str] = queue.Queue()
        self.stderr: queue.Queue[str] = queue.Queue()
        for stream, lines in ((self.proc.stdout, self.stdout), (self.proc.stderr, self.stderr)):
            threading.Thread(target=self._read, args=(stream, lines), daemon=True).start()

    @staticmethod
    def _read(stream: object, lines: queue.Queue[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.put(line)

    def line(self, lines: queue.Queue[str], wanted: str) -> str:
        """The next line holding ``wanted`` (60 s bounds a hung process, nothing is timed)."""
        while True:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                raise AssertionError(f"no line with {wanted!r}; exit code {self.proc.poll()}") from None
            if wanted in line:
                return line

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def test_serve_logs_the_configuration_it_read_and_where_it_listens(tmp_path):
    port, operator = free_port(), free_port()
    config = write_config(tmp_path, port, edge={"operator_port": operator})
    served = Running("serve", "--config", "gateway.yaml", cwd=tmp_path)
    try:
        read = json.loads(served.line(served.stderr, "configuration read from"))
        assert read["config"] == str(config.resolve())
        main_listener = json.loads(served.line(served.stderr, "listening on"))
        operator_listener = json.loads(served.line(served.stderr, "listening on"))
    finally:
        served.stop()
    assert (main_listener["url"], main_listener["listener"]) == (f"http://127.0.0.1:{port}", "main")
    assert (operator_listener["url"], operator_listener["listener"]) == (
        f"http://127.0.0.1:{operator}",
        "operator",
    )


def test_demo_verbose_shows_the_request_log_and_its_backends_take_the_ports_given(tmp_path):
    diffusion, autoregressive = free_port(), free_port()
    demo = Running(
        "demo",
        "--port",
        "0",
        "--backend-ports",
        f"{diffusion},{autoregressive}",
        "--profile",
        "instant",
        "--verbose",
        cwd=tmp_path,
    )
    try:
        base = demo.line(demo.stdout, "Gateway ready at").split()[3]
        demo.line(demo.stdout, "Development API key")
        key = next(line for line in iter(lambda: demo.stdout.get(timeout=60), "") if line.strip()).strip()
        for port in (diffusion, autoregressive):
            assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
        hello = {"model": "auto", "messages": [{"role": "user", "content": "Hello!"}]}
        reply = httpx.post(
            base + "/chat/completions", json=hello, headers={"authorization": f"Bearer {key}"}, timeout=30
        )
        assert reply.status_code == 200, reply.text
        logged = json.loads(demo.line(demo.stderr, '"gateway.request"'))
    finally:
        demo.stop()
    assert logged["request_id"] == reply.headers["x-request-id"]
    assert (logged["status"], logged["principal"], logged["backend"]) == (200, "demo", "diffusion")
    assert key not in json.dumps(logged)
    assert os.listdir(tmp_path) == []  # the demo keeps its key file and ledger in a temporary directory
