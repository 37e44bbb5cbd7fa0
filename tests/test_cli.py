from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import yaml

from gateway.auth.keys import KeyFile, KeyRecord, digest
from gateway.cli import main
from gateway.server import run
from tests.support import wait_for, write_key


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
    """The app it builds holds httpx clients (upstream, and the identity provider's with a JWT issuer) and
    a Redis connection pool (rate windows and leases): each is closed before the command returns."""
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
                "auth": {
                    "allow_anonymous": True,
                    "jwt": {
                        "issuer": "https://idp.test",
                        "audience": "gw",
                        "jwks_url": "https://idp.test/jwks",
                    },
                },
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


def test_keys_list_shows_every_setting_a_key_has(tmp_path, capsys):
    path = tmp_path / "keys.yaml"
    limits = {"requests_per_minute": 7, "tokens_per_minute": 8, "concurrent_requests": 9, "daily_tokens": 10}
    settings = {
        "models": ["auto", "fast"],
        "backends": ["diffusion"],
        "route_override": False,
        "speed_tier": "turbo",
        "thinking": False,
        "thinking_override": False,
        "strip_reasoning": True,
        "pacing": True,
        "route_threshold": 0.42,
        "tier": "gold",
        "limits": {**limits, "default_max_tokens": 11},
        "admin": True,
    }
    key = write_key(path, "everything", expires=datetime(2099, 1, 2, 3, 4, tzinfo=UTC), **settings)
    # Every field a key record has is set here, so a field added later and not listed fails this test.
    assert set(KeyRecord.model_fields) - set(settings) == {"name", "digest", "created", "expires", "revoked"}
    assert main(["keys", "list", "--keys-file", str(path)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:2] == ["NAME", "STATUS"] and "SETTINGS" in header
    shown = dict(pair.split("=") for pair in row.split("  ")[-1].split())
    assert shown == {
        "models": "auto,fast",
        "backends": "diffusion",
        "route_override": "false",
        "speed_tier": "turbo",
        "thinking": "false",
        "thinking_override": "false",
        "strip_reasoning": "true",
        "pacing": "true",
        "route_threshold": "0.42",
        "tier": "gold",
        **{name: str(value) for name, value in settings["limits"].items()},
        "admin": "true",
    }
    assert row.split()[:2] == ["everything", "active"] and "2099-01-02 03:04" in row
    assert key not in row and digest(key) not in row
    assert main(["keys", "list", "--keys-file", str(path), "--format", "json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["status"] == "active" and listed["revoked"] is False and listed["tier"] == "gold"
    assert listed["requests_per_minute"] == 7 and "digest" not in listed


def test_keys_purge_removes_revoked_and_expired_keys_and_keeps_the_rest(tmp_path, capsys):
    path = tmp_path / "keys.yaml"
    past = datetime.now(UTC) - timedelta(days=1)
    write_key(path, "live")
    write_key(path, "gone-revoked", revoked=True)
    write_key(path, "gone-expired", expires=past)
    write_key(path, "soon", expires=datetime.now(UTC) + timedelta(days=1))
    before = path.read_text()
    assert main(["keys", "purge", "--keys-file", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove gone-revoked (revoked" in out and "would remove gone-expired (expired" in out
    assert "would remove 2 of 4 keys" in out and path.read_text() == before
    assert main(["keys", "purge", "--keys-file", str(path)]) == 0
    assert "removed 2 of 4 keys" in capsys.readouterr().out
    assert [r.name for r in KeyFile.read(path).keys] == ["live", "soon"]
    assert main(["keys", "purge", "--keys-file", str(path)]) == 0
    assert "removed 0 of 2 keys" in capsys.readouterr().out


def test_a_rotated_key_keeps_its_name_settings_and_limits_and_the_old_one_works_for_the_grace(
    make_gateway, capsys
):
    gw = make_gateway(limits={"requests_per_minute": 2})
    keys_file = str(gw.keys_file)
    assert main(["keys", "revoke", "alice", "--keys-file", keys_file]) == 0  # the fixture's own alice
    capsys.readouterr()
    assert main(["keys", "create", "alice", "--keys-file", keys_file, "--models", "auto", "--pacing"]) == 0
    old = capsys.readouterr().out.strip()
    assert main(["keys", "rotate", "alice", "--keys-file", keys_file, "--grace", "24h"]) == 0
    new = capsys.readouterr().out.strip()
    assert new.startswith("gw-") and new != old
    first, second = [r for r in KeyFile.read(gw.keys_file).keys if not r.revoked]
    assert first.expires is not None and second.expires is None  # the old one ends with its grace
    assert (second.name, second.models, second.pacing) == ("alice", ["auto"], True)
    main(["keys", "list", "--keys-file", keys_file])
    statuses = [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:]]
    assert statuses == ["revoked", "retiring", "active"]

    def chat(key: str) -> httpx.Response:
        body = {"model": "auto", "messages": [{"role": "user", "content": "Hi"}]}
        return httpx.post(
            gw.base_url + "/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}
        )

    assert wait_for(lambda: chat(new).status_code == 200)  # the gateway reloaded the file
    assert chat(old).status_code == 200
    # One principal: one request rate for both keys, one name in the metrics.
    assert chat(new).status_code == 429
    assert wait_for(lambda: gw.metric("gateway_requests_total", principal="alice") == 3)

    assert main(["keys", "rotate", "alice", "--keys-file", keys_file, "--grace", "0"]) == 0
    newest = capsys.readouterr().out.strip()
    assert wait_for(lambda: chat(new).json()["error"]["message"] == "This API key has expired.")
    assert chat(newest).status_code == 429  # the same principal, still at its limit
    assert chat(old).status_code == 401
    assert main(["keys", "revoke", "alice", "--keys-file", keys_file]) == 0  # every key of the name
    assert all(r.revoked for r in KeyFile.read(gw.keys_file).keys)
    assert main(["keys", "rotate", "alice", "--keys-file", keys_file]) == 2
    assert "no usable key named 'alice'" in capsys.readouterr().err
