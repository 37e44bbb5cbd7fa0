"""Who can read /metrics, which names every key and backend with its traffic.

By default only the operator listener serves it: on the main listener, which every client reaches, it
needs ``telemetry.metrics_token``, and without one it is not served there at all. The shipped compose and
Kubernetes configurations serve it on the operator listener only, and their scrapers point there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import yaml
from prometheus_client import CollectorRegistry
from pydantic import SecretStr

from gateway.app import create_app
from gateway.config import load_settings
from gateway.telemetry.settings import TelemetrySettings
from tests.support import AR_MODEL, TwoListeners, gateway_settings, write_key

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
# A token in the environment must not open the main listener where the deployment keeps it shut.
TOKEN_ENV = {"GATEWAY_TELEMETRY__METRICS_TOKEN": "from-the-environment-0123456789"}


def test_by_default_the_main_listener_does_not_serve_metrics(tmp_path, diffusion_sim, ar_sim):
    assert TelemetrySettings().metrics_token is None  # the default this test runs with
    key = write_key(tmp_path / "keys.yaml", "tenant-alice")
    settings = gateway_settings(
        diffusion_sim.url,
        ar_sim.url,
        auth={"keys_file": str(tmp_path / "keys.yaml")},
        telemetry={"metrics_token": None},
        edge={"operator_port": 0},
    )
    # The simulators want their own keys, as vLLM started with --api-key does.
    keys = {"diffusion": "sim-diffusion-key", "autoregressive": "sim-ar-key"}
    backends = [b.model_copy(update={"api_key": SecretStr(keys[b.name])}) for b in settings.backends]
    settings = settings.model_copy(update={"backends": backends})
    with TwoListeners(create_app(settings, registry=CollectorRegistry())) as gw:
        main, operator = gw.url(gw.main), gw.url(gw.operator)
        chat = httpx.post(
            main + "/v1/chat/completions",
            json={"model": AR_MODEL, "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert chat.status_code == 200
        for headers in ({}, {"authorization": f"Bearer {key}"}, {"authorization": "Bearer x"}):
            refused = httpx.get(main + "/metrics", headers=headers, timeout=5)
            assert refused.status_code == 404 and "tenant-alice" not in refused.text
            assert orjson.loads(refused.content)["error"]["code"] == "unknown_url"
        scraped = httpx.get(operator + "/metrics", timeout=5)
        assert scraped.status_code == 200 and 'principal="tenant-alice"' in scraped.text


# ---- the shipped deployments ----------------------------------------------------------------------------


def _compose_gateway() -> tuple[dict[str, Any], Path]:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    gateway = compose["services"]["gateway"]
    target = gateway["environment"]["GATEWAY_CONFIG"]
    (source,) = [v.split(":")[0] for v in gateway["volumes"] if v.split(":")[1] == target]
    return gateway, ROOT / source


def _backend_keys(path: Path) -> dict[str, str]:
    names = [b["name"] for b in yaml.safe_load(path.read_text())["backends"]]
    return {f"GATEWAY_BACKENDS__{n.upper()}__API_KEY": "k" for n in names}


def test_compose_serves_metrics_on_the_unpublished_operator_listener_only():
    gateway, config = _compose_gateway()
    settings = load_settings(config, environ={**_backend_keys(config), **TOKEN_ENV})
    assert settings.telemetry.metrics_on_main is False
    operator = settings.edge.operator_port
    assert operator is not None and operator != settings.server.port
    published = [int(p.split(":")[-1]) for p in gateway["ports"]]
    assert published == [settings.server.port]  # the operator listener is not published
    scrape = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())["scrape_configs"]
    targets = [t for job in scrape for group in job["static_configs"] for t in group["targets"]]
    assert targets == [f"gateway:{operator}"]


def test_kubernetes_serves_metrics_on_the_operator_port_and_the_servicemonitor_scrapes_it():
    config = DEPLOY / "k8s" / "gateway-config.yaml"
    settings = load_settings(config, environ={**_backend_keys(config), **TOKEN_ENV})
    assert settings.telemetry.metrics_on_main is False
    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "gateway.yaml").read_text()) if d]
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": settings.server.port, "operator": settings.edge.operator_port}
    service = next(d for d in docs if d["kind"] == "Service")
    by_name = {p["name"]: p["targetPort"] for p in service["spec"]["ports"]}
    assert by_name["operator"] == "operator"
    monitor = yaml.safe_load((DEPLOY / "k8s" / "servicemonitor.yaml").read_text())
    assert [(e["port"], e["path"]) for e in monitor["spec"]["endpoints"]] == [("operator", "/metrics")]
