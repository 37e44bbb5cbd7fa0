"""`gateway init`: the starter files, and the stack the README's "From demo to your own stack" builds on
them (two `gateway simulate` processes, `gateway keys create`, `gateway serve`), run end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gateway.auth.keys import KeyFile, digest
from gateway.cli import main
from gateway.commands.init import render_config
from gateway.config import load_settings
from tests.redis_support import free_port
from tests.support import wait_for

ROOT = Path(__file__).resolve().parent.parent


def test_init_writes_a_valid_config_and_an_empty_key_file(tmp_path, capsys):
    assert main(["init", "--dir", str(tmp_path)]) == 0
    settings = load_settings(tmp_path / "gateway.yaml", environ={})
    assert [(b.name, b.kind, b.base_url) for b in settings.backends] == [
        ("diffusion", "diffusion", "http://127.0.0.1:8001"),
        ("autoregressive", "autoregressive", "http://127.0.0.1:8002"),
    ]
    assert (settings.server.host, settings.server.port) == ("127.0.0.1", 8080)
    assert settings.auth.keys_file == tmp_path / "keys.yaml"
    assert KeyFile.read(tmp_path / "keys.yaml").keys == []
    out = capsys.readouterr().out
    assert "gateway simulate --kind diffusion --port 8001 &" in out
    assert "gateway keys create alice --config gateway.yaml" in out


def test_init_refuses_to_overwrite_and_force_keeps_the_keys(tmp_path, capsys):
    assert main(["init", "--dir", str(tmp_path)]) == 0
    config = tmp_path / "gateway.yaml"
    config.write_text(config.read_text() + "# my edit\n")
    assert main(["init", "--dir", str(tmp_path)]) == 2
    assert "already exists; pass --force" in capsys.readouterr().err
    assert config.read_text().endswith("# my edit\n")

    assert main(["keys", "create", "alice", "--config", str(config)]) == 0
    key = capsys.readouterr().out.strip()
    real = ["--diffusion-url", "http://10.0.0.5:8000", "--autoregressive-url", "http://10.0.0.6:8000"]
    assert main(["init", "--dir", str(tmp_path), "--force", *real]) == 0
    assert "kept" in capsys.readouterr().out
    settings = load_settings(config, environ={})
    assert [b.base_url for b in settings.backends] == ["http://10.0.0.5:8000", "http://10.0.0.6:8000"]
    assert [k.digest for k in KeyFile.read(tmp_path / "keys.yaml").keys] == [digest(key)]


def test_init_validates_before_replacing_anything(tmp_path, capsys):
    assert main(["init", "--dir", str(tmp_path)]) == 0
    before = (tmp_path / "gateway.yaml").read_text()
    assert main(["init", "--dir", str(tmp_path), "--force", "--diffusion-url", "not a url"]) == 2
    assert "backends.diffusion.url" in capsys.readouterr().err
    assert (tmp_path / "gateway.yaml").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gateway.yaml", "keys.yaml"]  # no temp file left


def test_serving_with_an_empty_key_file_names_the_command_that_fixes_it(tmp_path, capsys):
    assert main(["init", "--dir", str(tmp_path)]) == 0
    assert main(["check-config", "--config", str(tmp_path / "gateway.yaml")]) == 2
    hint = capsys.readouterr().err
    keys_file = tmp_path / "keys.yaml"
    assert f"gateway keys create NAME --keys-file {keys_file}" in hint
    # The hint, followed, works.
    assert main(["keys", "create", "ops", "--keys-file", str(keys_file)]) == 0
    assert main(["check-config", "--config", str(tmp_path / "gateway.yaml")]) == 0


def test_the_readme_section_runs_the_commands_this_test_runs():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## From demo to your own stack", 1)[1].split("\n## ", 1)[0]
    for command in (
        "gateway init\n",
        "gateway simulate --kind diffusion --port 8001 &",
        "gateway simulate --kind autoregressive --port 8002 &",
        "export GATEWAY_KEY=$(gateway keys create alice --config gateway.yaml)",
        "gateway serve --config gateway.yaml &",
        "http://127.0.0.1:8080/v1/chat/completions",
    ):
        assert command in section, command
    # ... and those ports are init's defaults.
    text = render_config()
    assert "url: http://127.0.0.1:8001" in text and "url: http://127.0.0.1:8002" in text
    assert "port: 8080" in text


# ---- end to end: separate processes, as a user runs them -------------------------------------------------


class Processes:
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
        self.env["PYTHONPATH"] = str(ROOT)
        self.running: list[subprocess.Popen[bytes]] = []

    def gateway(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "gateway.cli", *args],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", *args],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.running.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.running:
            proc.terminate()
        for proc in self.running:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            if proc.stderr is not None:
                proc.stderr.close()


@pytest.fixture
def processes(tmp_path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    try:
        yield procs
    finally:
        procs.stop()


def answers(url: str, proc: subprocess.Popen[bytes]) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_init_keys_create_and_serve_in_front_of_two_simulators(processes):
    diffusion, autoregressive, port = free_port(), free_port(), free_port()
    sims = {
        "diffusion": processes.start(
            "simulate", "--kind", "diffusion", "--port", str(diffusion), "--profile", "instant"
        ),
        "autoregressive": processes.start(
            "simulate", "--kind", "autoregressive", "--port", str(autoregressive), "--profile", "instant"
        ),
    }
    processes.gateway(
        "init",
        "--port",
        str(port),
        "--diffusion-url",
        f"http://127.0.0.1:{diffusion}",
        "--autoregressive-url",
        f"http://127.0.0.1:{autoregressive}",
    )
    key = processes.gateway("keys", "create", "alice", "--config", "gateway.yaml").strip()
    assert key.startswith("gw-")
    for sim, sim_port in ((sims["diffusion"], diffusion), (sims["autoregressive"], autoregressive)):
        assert wait_for(lambda s=sim, p=sim_port: answers(f"http://127.0.0.1:{p}/health", s), 30, 0.1)
    gateway = processes.start("serve", "--config", "gateway.yaml")
    base = f"http://127.0.0.1:{port}"
    assert wait_for(lambda: answers(f"{base}/readyz", gateway), 30, 0.1)

    hello = {"model": "auto", "messages": [{"role": "user", "content": "Hello!"}]}
    auth = {"Authorization": f"Bearer {key}"}
    reply = httpx.post(f"{base}/v1/chat/completions", json=hello, headers=auth, timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.headers["x-gateway-backend"] == "diffusion"
    assert reply.json()["choices"][0]["message"]["content"]
    quality = httpx.post(
        f"{base}/v1/chat/completions", json={**hello, "model": "quality"}, headers=auth, timeout=30
    )
    assert quality.status_code == 200 and quality.headers["x-gateway-backend"] == "autoregressive"
    wrong = httpx.post(
        f"{base}/v1/chat/completions", json=hello, headers={"Authorization": "Bearer gw-x"}, timeout=30
    )
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"

    # A key created while it runs is picked up within auth.reload_interval (the README says so).
    bob = processes.gateway("keys", "create", "bob", "--config", "gateway.yaml").strip()
    bob_auth = {"Authorization": f"Bearer {bob}"}
    assert wait_for(
        lambda: (
            httpx.post(f"{base}/v1/chat/completions", json=hello, headers=bob_auth, timeout=30).status_code
            == 200
        ),
        30,
        0.2,
    )
