from __future__ import annotations

from pathlib import Path

import pytest

from gateway.config import ConfigError, load_settings

FULL = """
server: {host: 127.0.0.1, port: 8080}
backends:
  - name: diffusion
    kind: diffusion
    url: http://10.0.0.5:8000
    model: nvidia/diffusiongemma-26B-A4B-it-NVFP4
    api_key: upstream-secret-1
    max_concurrency: 4
    diffusion: {sampler: entropy_bound, entropy_bound: 0.1, canvas_length: 256, max_denoising_steps: 48}
  - name: autoregressive
    kind: autoregressive
    url: http://10.0.0.6:8000
    model: google/gemma-4-26B-A4B-it
auth:
  keys_file: keys.yaml
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gateway.yaml"
    path.write_text(text)
    return path


def test_full_example_loads(tmp_path):
    s = load_settings(write(tmp_path, FULL), environ={})
    d, ar = s.backends
    assert d.diffusion is not None and d.diffusion.entropy_bound == 0.1
    assert d.api_key is not None and d.api_key.get_secret_value() == "upstream-secret-1"
    assert ar.diffusion is None and ar.max_concurrency == 256 and d.max_concurrency == 4
    assert s.auth.keys_file == tmp_path / "keys.yaml"  # relative to the file
    assert d.base_url == "http://10.0.0.5:8000"


def test_diffusion_section_defaults_for_diffusion_backends(tmp_path):
    section = next(line for line in FULL.splitlines(keepends=True) if "diffusion: {sampler" in line)
    text = FULL.replace(section, "")
    s = load_settings(write(tmp_path, text), environ={})
    assert s.backends[0].diffusion is not None and s.backends[0].diffusion.canvas_length == 256


def test_environment_overrides_sections_and_backends_by_name(tmp_path):
    env = {
        "GATEWAY_SERVER__PORT": "9000",
        "GATEWAY_BACKENDS__AUTOREGRESSIVE__API_KEY": "from-env",
        "GATEWAY_BACKENDS__DIFFUSION__TIMEOUTS__FIRST_BYTE": "30",
        "GATEWAY_AUTH__RELOAD_INTERVAL": "5",
    }
    s = load_settings(write(tmp_path, FULL), environ=env)
    assert s.server.port == 9000
    assert s.backends[1].api_key is not None and s.backends[1].api_key.get_secret_value() == "from-env"
    assert s.backends[0].timeouts.first_byte == 30
    assert s.auth.reload_interval == 5


def test_config_file_from_environment(tmp_path):
    path = write(tmp_path, FULL)
    assert load_settings(environ={"GATEWAY_CONFIG": str(path)}).server.port == 8080


@pytest.mark.parametrize(
    ("edit", "env", "message"),
    [
        (("url: http://10.0.0.6:8000", "url: not-a-url"), {}, "backends.autoregressive.url"),
        (("port: 8080", "port: 99999"), {}, "server.port"),
        (("kind: autoregressive", "kind: quantum"), {}, "backends.autoregressive.kind"),
        (("name: autoregressive", "name: diffusion"), {}, "backend name 'diffusion' is used twice"),
        (("entropy_bound: 0.1", "entropy_bound: -1"), {}, "backends.diffusion.diffusion.entropy_bound"),
        (("keys_file: keys.yaml", "keys_file: keys.yaml\n  colour: blue"), {}, "auth.colour"),
        ((None, None), {"GATEWAY_SERVER__PORT": "eighty"}, "server.port"),
        ((None, None), {"GATEWAY_BACKENDS__NOPE__URL": "http://x"}, "no backend named 'nope'"),
    ],
)
def test_invalid_configuration_names_the_key(tmp_path, edit, env, message):
    text = FULL if edit[0] is None else FULL.replace(edit[0], edit[1])
    with pytest.raises(ConfigError) as info:
        load_settings(write(tmp_path, text), environ=env)
    assert message in str(info.value)


def test_no_backends_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="at least one backend"):
        load_settings(write(tmp_path, "server: {port: 1}\n"), environ={})


def test_unreadable_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(tmp_path / "missing.yaml", environ={})
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_settings(write(tmp_path, "server: [unclosed"), environ={})


JWT = """
auth:
  jwt:
    issuer: https://idp.example
    audience: gateway
    algorithms: {algs}
    {source}
"""


@pytest.mark.parametrize(
    ("algs", "source", "message"),
    [
        ("[RS256, HS256]", "jwks_url: https://idp.example/jwks", "must not be mixed"),
        ("[none]", "jwks_url: https://idp.example/jwks", "unsupported algorithm 'none'"),
        ("[RS256]", "secret: 0123456789abcdef0123456789abcdef", "shared secret needs HS"),
        ("[HS256]", "secret: short", "at least 32 characters"),
        ("[HS256]", "jwks_url: https://idp.example/jwks", "needs public-key algorithms"),
        ("[RS256]", "", "exactly one of"),
    ],
)
def test_jwt_settings_are_checked(tmp_path, algs, source, message):
    text = FULL.split("auth:")[0] + JWT.format(algs=algs, source=source)
    with pytest.raises(ConfigError) as info:
        load_settings(write(tmp_path, text), environ={})
    assert message in str(info.value)


def test_secrets_are_masked_in_dumps(tmp_path):
    s = load_settings(write(tmp_path, FULL), environ={})
    assert "upstream-secret-1" not in str(s.model_dump(mode="json"))
    assert "upstream-secret-1" not in repr(s)


def test_the_example_file_is_valid_and_the_docs_link_to_it():
    root = Path(__file__).resolve().parent.parent
    example = root / "deploy" / "gateway.example.yaml"
    s = load_settings(example, environ={})
    assert [b.name for b in s.backends] == ["diffusion", "autoregressive"]
    # The docs link to the file rather than copy it, so there is no copy to drift from it.
    assert "](deploy/gateway.example.yaml)" in (root / "README.md").read_text()
    assert "](../deploy/gateway.example.yaml)" in (root / "docs" / "configuration.md").read_text()
