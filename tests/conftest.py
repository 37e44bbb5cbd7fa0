from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import CollectorRegistry

from gateway.app import create_app
from gateway.simulator import SimulatorSettings, create_simulator
from gateway.simulator.state import SimulatorState
from tests.support import METRICS_AUTH, ServerThread, gateway_settings, write_key


@pytest.fixture(autouse=True)
def _usage_ledger_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The usage ledger is on by default (./usage.db): each test's gateways write theirs under tmp_path."""
    monkeypatch.setenv("GATEWAY_USAGE__URL", f"sqlite:///{tmp_path / 'usage.db'}")


@dataclass
class Sim:
    server: ServerThread
    state: SimulatorState

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="session")
def diffusion_sim() -> Iterator[Sim]:
    app, state = create_simulator(
        SimulatorSettings(kind="diffusion", profile="instant", api_key="sim-diffusion-key")
    )
    with ServerThread(app) as server:
        yield Sim(server, state)


@pytest.fixture(scope="session")
def ar_sim() -> Iterator[Sim]:
    app, state = create_simulator(
        SimulatorSettings(kind="autoregressive", profile="instant", api_key="sim-ar-key")
    )
    with ServerThread(app) as server:
        yield Sim(server, state)


@dataclass
class Gateway:
    server: ServerThread
    key: str
    keys_file: Path
    registry: CollectorRegistry

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def base_url(self) -> str:
        return self.server.url + "/v1"

    def metric(self, name: str, **labels: str) -> float:
        """The sum of every sample of ``name`` whose labels include ``labels``."""
        return sample_sum(self.registry, name, **labels)

    def scrape(self) -> str:
        """GET /metrics as a scraper does it: with the token the main listener asks for."""
        response = httpx.get(self.url + "/metrics", headers=METRICS_AUTH, timeout=10)
        assert response.status_code == 200, response.text
        return response.text


def sample_sum(registry: CollectorRegistry, name: str, **labels: str) -> float:
    total = 0.0
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


@pytest.fixture
def make_gateway(tmp_path: Path, diffusion_sim: Sim, ar_sim: Sim) -> Iterator[Any]:
    """Start a gateway in front of the session's simulators; keyword arguments go into Settings."""
    started: list[ServerThread] = []

    def start(
        *,
        auth: dict[str, Any] | None = None,
        timeouts: dict[str, float] | None = None,
        per_backend: dict[str, dict[str, Any]] | None = None,
        **kw: Any,
    ) -> Gateway:
        keys_file = tmp_path / "keys.yaml"
        key = write_key(keys_file, "alice") if not keys_file.exists() else ""
        backend_extra: dict[str, Any] = {"timeouts": timeouts} if timeouts else {}
        settings = gateway_settings(
            diffusion_sim.url,
            ar_sim.url,
            auth=auth or {"keys_file": str(keys_file), "reload_interval": 0.05},
            backend_extra=backend_extra,
            **kw,
        )
        # The simulators want their own keys, as vLLM started with --api-key does.
        backends = [
            b.model_copy(
                update={
                    "api_key": _secret(f"sim-{b.name.replace('autoregressive', 'ar')}-key"),
                    **(per_backend or {}).get(b.name, {}),
                }
            )
            for b in settings.backends
        ]
        settings = settings.model_copy(update={"backends": backends})
        registry = CollectorRegistry()
        server = ServerThread(create_app(settings, registry=registry)).__enter__()
        started.append(server)
        return Gateway(server, key, keys_file, registry)

    yield start
    for server in started:
        server.__exit__()


def _secret(value: str) -> Any:
    from pydantic import SecretStr

    return SecretStr(value)


@pytest.fixture
def gateway(make_gateway: Any) -> Gateway:
    gw: Gateway = make_gateway()
    return gw
