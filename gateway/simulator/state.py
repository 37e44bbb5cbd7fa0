"""What the simulator counts: the counters tests read, vLLM's own metrics, and the sequence slots
(``--max-num-seqs``) that make requests queue."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["SimulatorState", "Slots", "VllmMetrics"]


@dataclass
class SimulatorState:
    """Counters that tests read directly (in-process) or through ``GET /sim/stats``."""

    started: int = 0
    completed: int = 0
    cancelled: int = 0
    running: int = 0
    waiting: int = 0
    last_headers: dict[str, str] = field(default_factory=dict)
    last_body: dict[str, Any] = field(default_factory=dict)

    def snapshot(self) -> dict[str, Any]:
        return {
            "started": self.started,
            "completed": self.completed,
            "cancelled": self.cancelled,
            "running": self.running,
            "waiting": self.waiting,
        }


class VllmMetrics:
    """The vLLM metrics the gateway scrapes (telemetry.scrape_backends), under vLLM's own names."""

    def __init__(self, registry: CollectorRegistry, model: str, diffusion: bool) -> None:
        labels = {"model_name": model, "engine": "0"}
        names = list(labels)

        def gauge(name: str, doc: str) -> Any:
            return Gauge(name, doc, names, registry=registry).labels(**labels)

        self.running = gauge("vllm:num_requests_running", "Requests in model execution batches.")
        self.waiting = gauge("vllm:num_requests_waiting", "Requests waiting to be processed.")
        self.kv_cache = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
        self.ttft = Histogram(
            "vllm:time_to_first_token_seconds", "Time to first token.", names, registry=registry
        ).labels(**labels)
        self.e2e = Histogram(
            "vllm:e2e_request_latency_seconds", "End to end request latency.", names, registry=registry
        ).labels(**labels)
        self.diffusion = diffusion
        if diffusion:

            def counter(name: str, doc: str) -> Any:
                return Counter(name, doc, names, registry=registry).labels(**labels)

            self.steps = counter("vllm:diffusion_num_denoising_steps", "Denoising steps run.")
            self.positions = counter("vllm:diffusion_num_canvas_positions", "Canvas positions denoised.")
            self.committed = counter("vllm:diffusion_num_committed_tokens", "Tokens committed from canvases.")


class Slots:
    """``max_concurrency`` sequences, as ``--max-num-seqs``: beyond them, requests wait. Each wait and
    each running sequence shows in the counters and in vLLM's gauges."""

    def __init__(self, max_concurrency: int, state: SimulatorState, metrics: VllmMetrics) -> None:
        self.max_concurrency = max_concurrency
        self.state = state
        self.metrics = metrics
        self._free = asyncio.Semaphore(max_concurrency)

    async def __aenter__(self) -> None:
        s, m = self.state, self.metrics
        s.waiting += 1
        m.waiting.set(s.waiting)
        try:
            await self._free.acquire()
        finally:
            s.waiting -= 1
            m.waiting.set(s.waiting)
        s.running += 1
        m.running.set(s.running)
        m.kv_cache.set(min(1.0, s.running / self.max_concurrency * 0.8))

    async def __aexit__(self, *exc: object) -> None:
        s, m = self.state, self.metrics
        s.running -= 1
        m.running.set(s.running)
        m.kv_cache.set(min(1.0, s.running / self.max_concurrency * 0.8))
        self._free.release()
