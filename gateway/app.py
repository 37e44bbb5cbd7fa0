"""The app factory: everything is built here from one validated :class:`Settings`, nothing at import.

Tests build a fresh app with their own settings, upstream transport and metrics registry.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from gateway.api import openai as openai_routes
from gateway.api import ops
from gateway.api import usage as usage_routes
from gateway.api.errors import install_error_handlers
from gateway.api.fastpath import GatewayApp
from gateway.api.state import GatewayState
from gateway.auth import Authenticator
from gateway.auth.keys import KeyStore
from gateway.backends.health import probe_forever
from gateway.backends.state import BackendPool, SharedCount
from gateway.config import ConfigError, Settings, load_settings
from gateway.errors import ModelError
from gateway.limits.limiter import Limiter
from gateway.limits.store import build_store
from gateway.proxy.handler import ProxyHandler
from gateway.record import RequestRecord
from gateway.routing.scorer.load import scorer_for
from gateway.routing.scorer.model import ScorerModel
from gateway.server import serving_collections
from gateway.shadow.metrics import ShadowMetrics
from gateway.shadow.runner import ShadowRunner
from gateway.shadow.store import SampleStore
from gateway.telemetry.backends import BackendCollector, BackendSnapshot, scrape_forever
from gateway.telemetry.logs import AuthFailureLog, configure_logging
from gateway.telemetry.metrics import Metrics
from gateway.upstream import UpstreamClient, build_upstream
from gateway.usage.ledger import Ledger

if TYPE_CHECKING:
    import httpx

    from gateway.auth.tokens import JWTVerifier
    from gateway.telemetry.tracing import Tracer

__all__ = ["create_app"]

log = logging.getLogger("gateway")


def create_worker_app(config: Path | None, multiprocess_dir: str) -> GatewayApp:
    """The app of one ``gateway serve --workers N`` worker, given what the parent was given: the
    configuration file (None: GATEWAY_CONFIG) and the directory every worker's metrics are merged from."""
    settings = load_settings(config)
    configure_logging(settings.server.log_level)
    return create_app(settings, multiprocess_dir=multiprocess_dir, gc_clock=True)


def routing_model(settings: Settings) -> ScorerModel | None:
    """The difficulty scorer ``routing.scorer`` names, loaded now; a missing or unusable model file is a
    ConfigError naming the setting (the app and ``gateway route``)."""
    try:
        return scorer_for(settings.routing.scorer)
    except ModelError as exc:
        raise ConfigError(f"routing.scorer.model: {exc}") from None


def create_app(
    settings: Settings,
    *,
    upstream_transport: httpx.AsyncBaseTransport | None = None,
    idp_transport: httpx.AsyncBaseTransport | None = None,
    registry: CollectorRegistry | None = None,
    multiprocess_dir: str | None = None,
    gc_clock: bool = False,
) -> GatewayApp:
    """Build the gateway. Raises ConfigError when the auth material named in ``settings`` is unusable.

    ``gc_clock``: while the app runs, full garbage collections on a clock (``gateway.server``), for a
    ``gateway serve --workers`` worker, which uvicorn starts without going through ``server.serve``.
    """
    # Before any client is made: a bad model stops start-up with nothing to clean up.
    scorer = routing_model(settings)
    registry = registry or CollectorRegistry()
    metrics = Metrics(
        registry,
        (b.name for b in settings.backends),
        rules=(r.name for r in settings.routing.rules),
        tiers=settings.auth.tiers,
        principal_labels=settings.telemetry.metrics_principal,
    )
    keys = _key_store(settings)
    verifier: JWTVerifier | None = None
    idp_client: httpx.AsyncClient | None = None
    if settings.auth.jwt is not None:
        # Imported here: PyJWT, cryptography and httpx take ~13 MB that a gateway on API keys never uses.
        import httpx

        from gateway.auth.tokens import JWTVerifier

        idp_client = httpx.AsyncClient(transport=idp_transport, trust_env=False, follow_redirects=False)
        verifier = JWTVerifier(settings.auth.jwt, idp_client, tiers=settings.auth.tiers)
    if keys is not None and keys.usable_count == 0 and verifier is None and not settings.auth.allow_anonymous:
        raise ConfigError(
            f"auth.keys_file: {keys.path} holds no usable key and no JWT is configured; "
            f"create one with `gateway keys create NAME --keys-file {keys.path}` "
            "or set auth.allow_anonymous: true"
        )
    upstream = build_upstream(
        settings.backends,
        settings.server.upstream_client,
        transport=upstream_transport,
        max_response_bytes=settings.edge.max_upstream_response_bytes,
    )
    store = build_store(
        settings.state.redis_url.get_secret_value() if settings.state.redis_url is not None else None,
        prefix=settings.state.key_prefix,
        timeout=settings.state.timeout,
    )
    limiter = Limiter(
        settings.limits,
        settings.state,
        store,
        on_reject=lambda principal, limit: metrics.rate_limited.labels(
            metrics.principal_label(principal.kind, principal.name, principal.tier), limit
        ).inc(),
        on_store_error=lambda op: metrics.state_errors.labels(op).inc(),
        retry_hint_max_seconds=settings.limits.retry_hint_max_seconds,
    )
    ledger, tracer, finishers = _usage_and_tracing(settings, metrics)
    shared = SharedCount(store) if store.shared else None
    pool = BackendPool(settings.backends, settings.routing.breaker, shared=shared)
    snapshots: dict[str, BackendSnapshot] = {}
    backend_collector = BackendCollector(pool, snapshots)
    registry.register(backend_collector)
    shadow = _shadow(settings, upstream, pool, scorer, registry)
    if shadow is not None:
        finishers = (*finishers, shadow.finish)
    proxy = ProxyHandler(
        settings,
        upstream,
        pool,
        limiter,
        scorer=scorer,
        shadow=shadow.sampler if shadow is not None else None,
    )
    state = GatewayState(
        settings=settings,
        auth=Authenticator(
            keys=keys,
            jwt=verifier,
            allow_anonymous=settings.auth.allow_anonymous,
            tiers=settings.auth.tiers,
            on_failure=metrics.auth_failed,
        ),
        keys=keys,
        upstream=upstream,
        idp_client=idp_client,
        pool=pool,
        limiter=limiter,
        store=store,
        proxy=proxy,
        metrics=metrics,
        started_at=int(time.time()),
        exposition=_exposition(registry, backend_collector, multiprocess_dir),
        ledger=ledger,
        tracer=tracer,
        finishers=finishers,
        shadow=shadow,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tasks: list[asyncio.Task[None]] = []
        if keys is not None:
            tasks.append(asyncio.create_task(keys.watch(settings.auth.reload_interval)))
        interval = settings.routing.health_interval
        tasks.append(asyncio.create_task(probe_forever(pool, upstream, interval)))
        if settings.telemetry.scrape_backends:
            tasks.append(asyncio.create_task(scrape_forever(pool, upstream, snapshots, interval)))
        if verifier is not None and verifier.jwks is not None:
            await verifier.jwks.refresh()  # a failure is logged; cached-or-503 logic takes over
        if ledger is not None:
            ledger.start()
        if shadow is not None:
            shadow.start()
        # As server.serve does for one process.
        collections = serving_collections() if gc_clock else contextlib.nullcontext()
        try:
            with collections:
                yield
        finally:
            for task in tasks:
                task.cancel()
            # By now every request has finished, so every ledger row and span is queued.
            await state.aclose()

    app = FastAPI(
        title="diffusion-gateway",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.gateway = state
    app.include_router(openai_routes.router)
    app.include_router(ops.router)
    app.include_router(usage_routes.router)
    install_error_handlers(app)
    return GatewayApp(app, state)


def _usage_and_tracing(
    settings: Settings, metrics: Metrics
) -> tuple[Ledger | None, Tracer | None, tuple[Callable[[RequestRecord, float], None], ...]]:
    """The usage ledger and the tracer, and what the middleware runs when a request ends: the
    sampled log line of a refused credential, the trace's end, the ledger's row."""
    ledger = None
    if settings.usage.enabled:
        ledger = Ledger(settings.usage, dropped=metrics.usage_dropped, written=metrics.usage_written)
    tracer = None
    if settings.telemetry.tracing.enabled:
        try:
            from gateway.telemetry.tracing import Tracer
        except ImportError:
            raise ConfigError(
                "telemetry.tracing.enabled needs the OpenTelemetry SDK: "
                "pip install 'diffusion-gateway[tracing]'"
            ) from None
        tracer = Tracer(settings.telemetry, settings.backends)
    finishers: list[Callable[[RequestRecord, float], None]] = [
        AuthFailureLog(settings.telemetry.auth_failure_logs_per_second).finish
    ]
    if tracer is not None:
        finishers.append(tracer.finish)
    if ledger is not None:
        finishers.append(ledger.finish)
    return ledger, tracer, tuple(finishers)


def _shadow(
    settings: Settings,
    upstream: UpstreamClient,
    pool: BackendPool,
    scorer: ScorerModel | None,
    registry: CollectorRegistry,
) -> ShadowRunner | None:
    """Shadow evaluation (docs/shadow.md) when a share is set: its samples go to the usage database."""
    if not settings.shadow.active:
        return None
    usage = settings.usage
    store = SampleStore(
        usage.url.get_secret_value(),
        connect_timeout=usage.connect_timeout,
        write_timeout=usage.write_timeout,
    )
    metrics = ShadowMetrics(registry, settings.backends)
    return ShadowRunner(
        settings.shadow, settings.backends, pool, upstream, metrics, scorer=scorer, store=store
    )


def _exposition(
    registry: CollectorRegistry, backend_collector: BackendCollector, multiprocess_dir: str | None
) -> Callable[[], bytes]:
    """What GET /metrics serves: this process's registry, or, with several workers, every worker's
    counters and histograms merged from the multiprocess directory, plus this worker's backend view."""
    if multiprocess_dir is None:
        return lambda: generate_latest(registry)
    merged = CollectorRegistry()
    MultiProcessCollector(merged, path=multiprocess_dir)  # type: ignore[no-untyped-call]
    merged.register(backend_collector)
    return lambda: generate_latest(merged)


def _key_store(settings: Settings) -> KeyStore | None:
    path = settings.auth.keys_file
    if path is None:
        if settings.auth.jwt is None and not settings.auth.allow_anonymous:
            raise ConfigError(
                "auth: no API keys file and no JWT configured; set auth.keys_file or auth.jwt, "
                "or auth.allow_anonymous: true to run without authentication"
            )
        return None
    try:
        return KeyStore(path)
    except ValueError as exc:
        raise ConfigError(f"auth.keys_file: {exc}") from None
