"""Every URL in the settings is checked when the configuration loads: ``gateway check-config`` and
``gateway serve`` answer a bad one with one line naming the field, exit status 2 and no traceback.

A bad ``state.redis_url`` was only read when the app was built (the Redis client, the limits library)
and both commands died with a traceback there; a backend URL with a query, a fragment or credentials
loaded and then sent requests nowhere useful.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.cli import main

SECRET = "hunter2-secret"


def config(**sections: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "backends": [
            {"name": "d", "kind": "diffusion", "url": "http://127.0.0.1:9", "model": "m1"},
            {"name": "a", "kind": "autoregressive", "url": "http://127.0.0.1:9", "model": "m2"},
        ],
        "auth": {"allow_anonymous": True},
    }
    for name, section in sections.items():
        base[name] = {**base.get(name, {}), **section} if isinstance(section, dict) else section
    return base


def backend_url(url: str) -> dict[str, Any]:
    cfg = config()
    cfg["backends"][0]["url"] = url
    return cfg


JWT = {"audience": "a", "issuer": "https://idp.example", "algorithms": ["RS256"]}

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("redis-scheme", config(state={"redis_url": f"http://:{SECRET}@redis:6379/0"}), "state.redis_url"),
    ("redis-port-word", config(state={"redis_url": f"redis://:{SECRET}@redis:port/0"}), "state.redis_url"),
    ("redis-port-range", config(state={"redis_url": "redis://redis:99999/0"}), "state.redis_url"),
    ("redis-ipv6", config(state={"redis_url": f"redis://:{SECRET}@[::1:6379/0"}), "state.redis_url"),
    ("redis-no-port", config(state={"redis_url": f"redis://:{SECRET}@redis/0"}), "state.redis_url"),
    ("redis-db-word", config(state={"redis_url": "redis://redis:6379/zero"}), "state.redis_url"),
    ("redis-option", config(state={"redis_url": "redis://redis:6379/0?socket_timeout=x"}), "state.redis_url"),
    ("redis-words", config(state={"redis_url": "not a url"}), "state.redis_url"),
    ("backend-scheme", backend_url("ftp://vllm:8000"), "backends.d.url"),
    ("backend-port", backend_url("http://vllm:99999"), "backends.d.url"),
    ("backend-query", backend_url("http://vllm:8000/?x=1"), "backends.d.url"),
    ("backend-fragment", backend_url("http://vllm:8000/#v1"), "backends.d.url"),
    ("backend-credentials", backend_url(f"http://user:{SECRET}@vllm:8000"), "backends.d.url"),
    ("usage-port", config(usage={"url": f"postgresql://u:{SECRET}@db:port/ledger"}), "usage.url"),
    ("usage-database", config(usage={"url": "mysql://u@db/ledger"}), "usage.url"),
    ("jwks-scheme", config(auth={"jwt": {**JWT, "jwks_url": "ftp://idp/jwks"}}), "auth.jwt.jwks_url"),
    ("jwks-port", config(auth={"jwt": {**JWT, "jwks_url": "https://idp:0x1/jwks"}}), "auth.jwt.jwks_url"),
    (
        "otlp-scheme",
        config(telemetry={"tracing": {"endpoint": "udp://otel:4318"}}),
        "telemetry.tracing.endpoint",
    ),
    (
        "otlp-port",
        config(telemetry={"tracing": {"endpoint": "http://otel:70000/v1/traces"}}),
        "telemetry.tracing.endpoint",
    ),
]


@pytest.mark.parametrize("command", ["check-config", "serve"])
@pytest.mark.parametrize(("case", "settings", "field"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_url_is_one_line_naming_its_field(
    tmp_path: Path, capsys, monkeypatch, case, settings, field, command
):
    # The configuration's own usage.url is the one under test (the suite's fixture sets the variable).
    monkeypatch.delenv("GATEWAY_USAGE__URL", raising=False)

    def never_served(*args: Any) -> None:
        raise AssertionError("a configuration with a bad URL was served")

    monkeypatch.setattr("gateway.commands.serve.run", never_served)
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(settings))
    assert main([command, "--config", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err and SECRET not in err
    lines = err.splitlines()
    assert lines[0] == "gateway: invalid configuration:", err
    assert len(lines) == 2 and lines[1].startswith(f"  {field}: "), err


@pytest.mark.parametrize(
    "url",
    ["redis://redis:6379/0", "rediss://:pw@redis.example:6380", "redis://[::1]:6379/", "redis://u:p@r:1/15"],
)
def test_good_redis_urls_load(tmp_path: Path, url):
    from gateway.config import load_settings

    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(config(state={"redis_url": url})))
    settings = load_settings(path, environ={})
    assert settings.state.redis_url is not None and settings.state.redis_url.get_secret_value() == url


def test_a_backend_url_may_have_a_path_prefix(tmp_path: Path):
    from gateway.config import load_settings

    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(backend_url("https://vllm.example/diffusion/")))
    assert load_settings(path, environ={}).backends[0].base_url == "https://vllm.example/diffusion"
