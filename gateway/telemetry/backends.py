"""What the backends say about themselves, and what the gateway knows about them, as gauges at scrape
time: requests in flight through the gateway, health, circuit breaker, and the vLLM servers' own load
and diffusion counters, scraped from each backend's ``/metrics`` on the private network.

From the diffusion counters' deltas between two scrapes the collector derives denoising steps per canvas
and tokens committed per step (docs/backends.md: exact per request only when one was in flight alone, so
these are aggregates over the interval).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from gateway.backends.state import BackendPool, BackendState
from gateway.upstream import UpstreamClient, UpstreamError

__all__ = ["BackendCollector", "BackendSnapshot", "scrape_forever", "scrape_once"]

log = logging.getLogger("gateway.telemetry")

SCRAPE_TIMEOUT = 2.0
_GAUGES = {
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:kv_cache_usage_perc": "kv_cache",
}
_COUNTERS = {
    "vllm:diffusion_num_denoising_steps_total": "steps",
    "vllm:diffusion_num_canvas_positions_total": "positions",
    "vllm:diffusion_num_committed_tokens_total": "committed",
}


@dataclass
class BackendSnapshot:
    scraped: bool = False
    gauges: dict[str, float] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    steps_per_canvas: float | None = None
    tokens_per_step: float | None = None

    def update(self, text: str, canvas_length: int | None) -> None:
        gauges: dict[str, float] = {}
        counters: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name in _GAUGES:
                    key = _GAUGES[sample.name]
                    gauges[key] = gauges.get(key, 0.0) + sample.value
                elif sample.name in _COUNTERS:
                    key = _COUNTERS[sample.name]
                    counters[key] = counters.get(key, 0.0) + sample.value
        previous = self.counters
        delta = {k: counters.get(k, 0.0) - previous.get(k, 0.0) for k in counters}
        if previous and canvas_length and all(v >= 0 for v in delta.values()):
            canvases = delta.get("positions", 0.0) / canvas_length
            if canvases > 0 and delta.get("steps", 0.0) > 0:
                self.steps_per_canvas = delta["steps"] / canvases
                self.tokens_per_step = delta.get("committed", 0.0) / delta["steps"]
        self.gauges, self.counters, self.scraped = gauges, counters, True


async def _scrape(state: BackendState, upstream: UpstreamClient, snapshot: BackendSnapshot) -> None:
    settings = state.settings
    try:
        status, body = await upstream.get(settings, "/metrics", within=SCRAPE_TIMEOUT)
    except UpstreamError:
        return
    if status != 200:
        return
    try:
        canvas = settings.diffusion.canvas_length if settings.diffusion is not None else None
        snapshot.update(body.decode("utf-8", "replace"), canvas)
    except ValueError:
        log.warning("unparseable /metrics", extra={"fields": {"backend": settings.name}})


async def scrape_once(
    pool: BackendPool, upstream: UpstreamClient, snapshots: dict[str, BackendSnapshot]
) -> None:
    await asyncio.gather(
        *(
            _scrape(state, upstream, snapshots.setdefault(name, BackendSnapshot()))
            for name, state in pool.states.items()
        )
    )


async def scrape_forever(
    pool: BackendPool, upstream: UpstreamClient, snapshots: dict[str, BackendSnapshot], interval: float
) -> None:
    while True:
        await scrape_once(pool, upstream, snapshots)
        await asyncio.sleep(interval)


class BackendCollector(Collector):
    def __init__(self, pool: BackendPool, snapshots: dict[str, BackendSnapshot]) -> None:
        self._pool = pool
        self._snapshots = snapshots

    def collect(self) -> Iterator[Metric]:
        def gauge(name: str, doc: str) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, doc, labels=["backend"])

        info = GaugeMetricFamily(
            "gateway_backend_info",
            "1 for each configured backend, with its kind.",
            labels=["backend", "kind"],
        )
        in_flight = gauge("gateway_backend_in_flight", "Requests the gateway has in flight at the backend.")
        up = gauge("gateway_backend_up", "1 when the backend passes its health probe, else 0.")
        breaker = gauge("gateway_backend_breaker_open", "1 while the backend's circuit breaker is open.")
        running = gauge("gateway_backend_requests_running", "vllm:num_requests_running, scraped.")
        waiting = gauge("gateway_backend_requests_waiting", "vllm:num_requests_waiting, scraped.")
        kv_cache = gauge("gateway_backend_kv_cache_usage", "vllm:kv_cache_usage_perc, scraped (1 = full).")
        steps_per_canvas = gauge(
            "gateway_backend_diffusion_steps_per_canvas", "Denoising steps per canvas over the last scrape."
        )
        tokens_per_step = gauge(
            "gateway_backend_diffusion_tokens_per_step",
            "Tokens committed per denoising step over the last scrape.",
        )
        counters = {
            key: CounterMetricFamily(
                f"gateway_backend_diffusion_{key}", f"vllm:diffusion_num_{name}, scraped.", labels=["backend"]
            )
            for key, name in (
                ("steps", "denoising_steps"),
                ("positions", "canvas_positions"),
                ("committed", "committed_tokens"),
            )
        }
        for name, state in self._pool.states.items():
            info.add_metric([name, state.settings.kind], 1.0)
            in_flight.add_metric([name], state.in_flight)
            up.add_metric([name], 1.0 if state.healthy else 0.0)
            breaker.add_metric([name], 1.0 if state.breaker.state == "open" else 0.0)
            snap = self._snapshots.get(name)
            if snap is None or not snap.scraped:
                continue
            for family, key in ((running, "running"), (waiting, "waiting"), (kv_cache, "kv_cache")):
                if key in snap.gauges:
                    family.add_metric([name], snap.gauges[key])
            for key, family_c in counters.items():
                if key in snap.counters:
                    family_c.add_metric([name], snap.counters[key])
            if snap.steps_per_canvas is not None:
                steps_per_canvas.add_metric([name], snap.steps_per_canvas)
            if snap.tokens_per_step is not None:
                tokens_per_step.add_metric([name], snap.tokens_per_step)
        yield from (
            info,
            in_flight,
            up,
            breaker,
            running,
            waiting,
            kv_cache,
            steps_per_canvas,
            tokens_per_step,
        )
        yield from counters.values()
