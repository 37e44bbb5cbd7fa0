from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
import yaml

from gateway.auth.keys import KeyFile, digest
from gateway.cli import main
from gateway.server import run


def test_keys_lifecycle(tmp_path, capsys):
    path = tmp_path / "keys.yaml"
    assert (
        main(
            [
                "keys",
                "create",
                "alice",
                "--keys-file",
                str(path),
                "--models",
                "auto,autoregressive",
                "--expires",
                "2099-01-01",
            ]
        )
        == 0
    )
    key = capsys.readouterr().out.strip()
    assert key.startswith("gw-")
    record = KeyFile.read(path).keys[0]
    assert record.digest == digest(key) and key not in path.read_text()
    assert (
        record.models == ["auto", "autoregressive"]
        and record.expires is not None
        and record.expires.year == 2099
    )

    assert record.pacing is None and record.thinking is None and record.strip_reasoning is None
    flags = ["--pacing", "--no-thinking", "--strip-reasoning"]
    assert main(["keys", "create", "bot", "--keys-file", str(path), *flags]) == 0
    bot = KeyFile.read(path).keys[1]
    assert (bot.pacing, bot.thinking, bot.strip_reasoning) == (True, False, True)

    assert main(["keys", "create", "alice", "--keys-file", str(path)]) == 2  # names are unique
    assert "already exists" in capsys.readouterr().err

    assert main(["keys", "list", "--keys-file", str(path)]) == 0
    listing = capsys.readouterr().out
    assert "alice" in listing and "active" in listing and key not in listing and digest(key) not in listing

    assert main(["keys", "revoke", "alice", "--keys-file", str(path)]) == 0
    assert KeyFile.read(path).keys[0].revoked
    main(["keys", "list", "--keys-file", str(path)])
    assert "revoked" in capsys.readouterr().out
    assert main(["keys", "revoke", "alice", "--keys-file", str(path)]) == 2


def test_keys_file_comes_from_the_config(tmp_path, capsys):
    config = tmp_path / "gateway.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "backends": [{"name": "d", "kind": "diffusion", "url": "http://127.0.0.1:1", "model": "m"}],
                "auth": {"keys_file": "my-keys.yaml"},
            }
        )
    )
    assert main(["keys", "create", "bob", "--config", str(config)]) == 0
    assert (tmp_path / "my-keys.yaml").exists()


def test_bad_expiry_is_a_clear_error(tmp_path, capsys):
    assert main(["keys", "create", "x", "--keys-file", str(tmp_path / "k.yaml"), "--expires", "soonish"]) == 2
    assert "--expires" in capsys.readouterr().err


def test_check_config_masks_secrets(tmp_path, capsys):
    config = tmp_path / "gateway.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "backends": [
                    {
                        "name": "d",
                        "kind": "diffusion",
                        "url": "http://127.0.0.1:1",
                        "model": "m",
                        "api_key": "upstream-very-secret",
                    }
                ],
                "auth": {"allow_anonymous": True},
            }
        )
    )
    assert main(["check-config", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "configuration is valid" in out and "upstream-very-secret" not in out and "**********" in out
    assert "entropy_bound: 0.1" in out


def test_check_config_rejects_no_auth_and_bad_values(tmp_path, capsys):
    config = tmp_path / "gateway.yaml"
    config.write_text(
        yaml.safe_dump({"backends": [{"name": "d", "kind": "diffusion", "url": "http://h:1", "model": "m"}]})
    )
    assert main(["check-config", "--config", str(config)]) == 2
    assert "allow_anonymous" in capsys.readouterr().err
    config.write_text(
        yaml.safe_dump(
            {
                "backends": [{"name": "d", "kind": "diffusion", "url": "http://h:1", "model": "m"}],
                "auth": {"keys_file": "empty.yaml"},
            }
        )
    )
    assert main(["check-config", "--config", str(config)]) == 2
    assert "holds no usable key" in capsys.readouterr().err


def test_check_config_closes_the_clients_it_made(tmp_path, monkeypatch, capsys):
    """The app it builds holds httpx clients (upstream, identity provider) and a Redis connection pool
    (rate windows and leases): each is closed before the command returns."""
    import httpx
    from redis.asyncio import ConnectionPool

    made: list[object] = []
    closed: list[object] = []

    def track(cls: type, close: str) -> None:
        init, aclose = cls.__init__, getattr(cls, close)

        def tracked_init(self, *args, **kwargs) -> None:
            made.append(self)
            init(self, *args, **kwargs)

        async def tracked_close(self, *args, **kwargs) -> None:
            closed.append(self)
            await aclose(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", tracked_init)
        monkeypatch.setattr(cls, close, tracked_close)

    track(httpx.AsyncClient, "aclose")
    track(ConnectionPool, "aclose")
    config = tmp_path / "gateway.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "server": {"upstream_client": "httpx"},
                "backends": [{"name": "d", "kind": "diffusion", "url": "http://127.0.0.1:1", "model": "m"}],
                "auth": {"allow_anonymous": True},
                "state": {"redis_url": "redis://127.0.0.1:1/0"},
            }
        )
    )
    assert main(["check-config", "--config", str(config)]) == 0
    kinds = sorted(type(m).__name__ for m in made)
    assert kinds == ["AsyncClient", "AsyncClient", "ConnectionPool"]
    assert all(any(c is m for c in closed) for m in made), [type(m).__name__ for m in made if m not in closed]


def test_serve_fails_fast_with_a_message(tmp_path):
    config = tmp_path / "gateway.yaml"
    config.write_text("backends: []\n")
    result = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "at least one backend" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_the_servers_run_on_the_configured_event_loop(loop):
    seen: list[str] = []

    async def main_() -> None:
        seen.append(type(asyncio.get_running_loop()).__module__)

    run(main_(), loop)
    assert seen[0].split(".")[0] == loop


def test_an_unknown_event_loop_is_a_clear_configuration_error(tmp_path, capsys):
    config = tmp_path / "gateway.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "server": {"loop": "trio"},
                "backends": [{"name": "d", "kind": "diffusion", "url": "http://h:1", "model": "m"}],
            }
        )
    )
    assert main(["check-config", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "server.loop" in err and "asyncio" in err and "Traceback" not in err


def test_check_config_masks_the_redis_url_metrics_token_and_url_credentials(tmp_path, capsys):
    config = tmp_path / "gateway.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "backends": [
                    {
                        "name": "d",
                        "kind": "diffusion",
                        "url": "http://127.0.0.1:1",  # credentials in it are refused (api_key)
                        "model": "m",
                    }
                ],
                "auth": {
                    "allow_anonymous": True,
                    "jwt": {
                        "issuer": "https://idp.example",
                        "audience": "gw",
                        "jwks_url": "https://jwks-user:jwks-pass@idp.example/jwks.json",
                    },
                },
                "state": {"redis_url": "redis://:redis-very-secret@127.0.0.1:1/0"},
                "telemetry": {"metrics_token": "metrics-very-secret"},
            }
        )
    )
    assert main(["check-config", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    for secret in ("redis-very-secret", "metrics-very-secret", "jwks-pass", "jwks-user"):
        assert secret not in out
    assert "idp.example/jwks.json" in out and "127.0.0.1:1" in out


def test_the_workers_metrics_directory_is_in_the_environment_only_while_they_run(monkeypatch):
    """The one environment write `gateway serve --workers` keeps (prometheus-client reads its directory
    from there only): undone afterwards, and an operator's own directory left as it was."""
    import os

    from gateway.commands.serve import _workers_environment

    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    with _workers_environment("/run/metrics"):
        assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == "/run/metrics"
    assert "PROMETHEUS_MULTIPROC_DIR" not in os.environ
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "/operator/dir")
    with pytest.raises(RuntimeError), _workers_environment("/operator/dir"):
        raise RuntimeError("a worker failed")
    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == "/operator/dir"
