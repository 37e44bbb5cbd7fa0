"""The ``gateway`` command: init, serve, demo, simulate, keys, route, router, check-config."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import ValidationError
from starlette.types import ASGIApp

from gateway.auth.keys import KeyFile, KeyRecord, digest, generate_key
from gateway.commands import router as router_commands
from gateway.commands.init import add_init_parser
from gateway.config import ConfigError, Settings, load_settings
from gateway.limits.settings import LimitSettings
from gateway.server import bind, run, serve, uvicorn_config
from gateway.simulator import PROFILES, SimulatorSettings, create_simulator
from gateway.telemetry.logs import configure_logging
from gateway.usage import cli as usage_cli

__all__ = ["main"]

DEFAULT_KEYS_FILE = Path("keys.yaml")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except ConfigError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return result


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gateway", description=__doc__)
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    add_init_parser(sub)

    p = sub.add_parser("serve", help="run the gateway")
    p.add_argument("--config", type=Path, help="YAML configuration (default: $GATEWAY_CONFIG)")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes; limits and metrics stay whole with state.redis_url",
    )
    p.set_defaults(func=_serve)

    p = sub.add_parser("demo", help="simulated backends + gateway on loopback, with a development key")
    p.add_argument("--port", type=int, default=8080, help="the gateway's port (default 8080)")
    p.add_argument("--profile", choices=sorted(PROFILES), default="h100", help="simulated timing profile")
    p.set_defaults(func=_demo)

    p = sub.add_parser("simulate", help="run one simulated vLLM backend")
    p.add_argument("--kind", choices=["diffusion", "autoregressive"], required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--model", default="", help="the model id it serves (default: by kind)")
    p.add_argument("--profile", choices=sorted(PROFILES), default="h100")
    p.add_argument("--max-concurrency", type=int, default=None, help="like --max-num-seqs")
    p.add_argument("--api-key", default=None, help="require this key, like vllm serve --api-key")
    p.set_defaults(func=_simulate)

    keys = sub.add_parser("keys", help="manage API keys").add_subparsers(required=True, metavar="ACTION")
    for name, func, helptext in (
        ("create", _keys_create, "create a key; it is printed once"),
        ("list", _keys_list, "list keys (never the keys themselves)"),
        ("revoke", _keys_revoke, "revoke a key"),
    ):
        p = keys.add_parser(name, help=helptext)
        if name != "list":
            p.add_argument("name")
        if name == "create":
            p.add_argument("--expires", help="ISO date or datetime, or a duration such as 30d or 12h")
            p.add_argument("--models", help="comma-separated model ids or backend names (and/or 'auto')")
            p.add_argument("--backends", help="comma-separated backend names its requests may be routed to")
            p.add_argument("--tier", help="an auth.tiers entry whose policy applies to the key")
            p.add_argument(
                "--speed-tier", help="a routing.speed_tiers entry applied to its diffusion requests"
            )
            p.add_argument(
                "--no-route-override", action="store_true", help="forbid x-gateway-route and aliases"
            )
            p.add_argument(
                "--route-threshold",
                type=float,
                help="its routing.scorer threshold: higher keeps more on diffusion (speed), lower sends "
                "more to the autoregressive backend (quality)",
            )
            p.add_argument(
                "--pacing",
                action=argparse.BooleanOptionalAction,
                help="pace its diffusion streams (default: its tier's, then pacing.enabled)",
            )
            p.add_argument(
                "--thinking",
                action=argparse.BooleanOptionalAction,
                help="its default for chat_template_kwargs.enable_thinking",
            )
            p.add_argument("--strip-reasoning", action="store_true", help="remove reasoning from its answers")
            p.add_argument("--admin", action="store_true", help="the admin scope: may read everyone's usage")
            p.add_argument("--rpm", type=int, help="requests per minute")
            p.add_argument("--tpm", type=int, help="tokens per minute (prompt + completion)")
            p.add_argument("--concurrency", type=int, help="concurrent requests")
            p.add_argument("--daily-tokens", type=int, help="tokens per UTC day")
        p.add_argument("--keys-file", type=Path, help="default: auth.keys_file of --config, else ./keys.yaml")
        p.add_argument("--config", type=Path)
        p.set_defaults(func=func)

    p = sub.add_parser("route", help="show where a request body would be routed, without sending it")
    p.add_argument("file", type=Path, help="a chat or completions request body (JSON); - for stdin")
    p.add_argument("--config", type=Path)
    p.add_argument(
        "--header", action="append", default=[], metavar="NAME:VALUE", help="e.g. x-gateway-route:fast"
    )
    p.add_argument(
        "--api",
        choices=["chat", "completions", "responses", "messages"],
        help="the API the body is for (default: anthropic-version header -> messages, else from its fields)",
    )
    p.set_defaults(func=_route)

    router_commands.add_parser(sub)

    p = sub.add_parser("check-config", help="validate a configuration and print it, secrets masked")
    p.add_argument("--config", type=Path)
    p.set_defaults(func=_check_config)

    usage_cli.register(sub)  # gateway usage (issue 19)
    return parser


# ---- serve / check-config ---------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    from gateway.app import create_app

    settings = load_settings(args.config)
    configure_logging(settings.server.log_level)
    if args.workers > 1:
        return _serve_workers(args, settings)
    app = create_app(settings)
    sockets = [bind(settings.server.host, settings.server.port), *_operator_socket(settings)]
    if len(sockets) > 1:
        app.edge.operator_ports.add(sockets[1].getsockname()[1])
    run(serve([(app, sockets)], settings.server.log_level), settings.server.loop)
    return 0


def _operator_socket(settings: Settings) -> list[socket.socket]:
    """The operator listener (edge.operator_port): /healthz, /readyz and /metrics, reachable when the
    main listener is at its connection cap."""
    edge = settings.edge
    return [] if edge.operator_port is None else [bind(edge.operator_host, edge.operator_port)]


def _serve_workers(args: argparse.Namespace, settings: Settings) -> int:
    """Several uvicorn workers on one socket. Each builds its app from GATEWAY_CONFIG; Prometheus metrics
    are aggregated across them with prometheus-client's multiprocess mode, whose directory must be set
    before any worker imports prometheus_client."""
    import shutil

    from uvicorn.supervisors import Multiprocess

    if settings.state.redis_url is None:
        print(
            "gateway: warning: several workers without state.redis_url: limits and counts are per worker",
            file=sys.stderr,
        )
    _validate_in_parent(settings)
    # An operator's own directory (say a Kubernetes emptyDir) is used as it is; else a fresh one.
    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    metrics_dir = given or tempfile.mkdtemp(prefix="gateway-metrics-")
    if args.config is not None:
        os.environ["GATEWAY_CONFIG"] = str(Path(args.config).resolve())
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    if settings.edge.operator_port == 0:
        raise ConfigError("edge.operator_port: several workers need a fixed port, not 0")
    # The same configuration as one process (gateway.server), so the edge's protocol too: each worker
    # finds its own edge state (its connection cap is per process, as the file limit it is derived from).
    config = uvicorn_config(
        "gateway.app:create_app_from_environment",
        settings.server.log_level,
        keepalive_timeout=settings.edge.keepalive_timeout,
        loop=settings.server.loop,
        factory=True,
        workers=args.workers,
    )
    # Bound here and handed to every worker, the operator listener's too (uvicorn.run binds only one).
    sockets = [bind(settings.server.host, settings.server.port), *_operator_socket(settings)]
    try:
        Multiprocess(config, sockets=sockets).run()
    finally:
        if not given:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def _validate_in_parent(settings: Settings) -> None:
    """Build the app once in the parent, so bad key files or JWT material fail with a clear error before
    any worker starts. Its metrics (the edge's gauges are set at once) must not land in the workers'
    multiprocess directory: the parent stays alive, so a live-summed gauge such as
    gateway_connections_limit would count it as a third worker. They go to a scratch directory."""
    from gateway.app import create_app

    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    with tempfile.TemporaryDirectory(prefix="gateway-validate-") as scratch:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = scratch
        try:
            create_app(settings)
        finally:
            if given is None:
                del os.environ["PROMETHEUS_MULTIPROC_DIR"]
            else:
                os.environ["PROMETHEUS_MULTIPROC_DIR"] = given


def _check_config(args: argparse.Namespace) -> int:
    from gateway.app import create_app

    settings = load_settings(args.config)
    create_app(settings)  # also loads the key file and JWT key material, as serve would
    print("configuration is valid; resolved to:")
    print(yaml.safe_dump(_masked(settings.model_dump(mode="json")), sort_keys=False), end="")
    return 0


def _masked(value: object) -> object:
    """The dumped settings with credentials in URLs masked too (a backend's or the JWKS URL's
    ``user:password@``); SecretStr fields are already ``**********``."""
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    if isinstance(value, str) and "@" in value and "://" in value:
        parts = urlsplit(value)
        if parts.password is not None or parts.username:
            host = parts.netloc.rpartition("@")[2]
            return urlunsplit(parts._replace(netloc=f"**********@{host}"))
    return value


def _route(args: argparse.Namespace) -> int:
    import orjson
    from starlette.datastructures import Headers

    from gateway.auth.principal import Principal
    from gateway.errors import GatewayError
    from gateway.proxy.body import parse_request
    from gateway.proxy.handler import (
        EXPLAIN_FEATURES,
        describe,
        dry_run_endpoint,
        plan_route,
        second_stage_texts,
    )
    from gateway.routing import extract_features
    from gateway.routing.embedding import second_stage_for
    from gateway.routing.scorer import ModelError, scorer_for
    from gateway.routing.state import BackendPool

    settings = load_settings(args.config)
    body = sys.stdin.buffer.read() if str(args.file) == "-" else args.file.read_bytes()
    headers = Headers({k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in args.header)})
    try:
        scorer = scorer_for(settings.routing.scorer)
    except ModelError as exc:
        raise ConfigError(f"routing.scorer.model: {exc}") from None
    try:
        stage = second_stage_for(settings.routing.scorer.second_stage)
    except ModelError as exc:
        raise ConfigError(f"routing.scorer.second_stage: {exc}") from None
    try:
        endpoint = dry_run_endpoint(body, args.api, headers)
        parsed = parse_request(body, endpoint, max_n=settings.server.max_n, max_output_tokens=None)
        views = BackendPool(settings.backends, settings.routing.breaker).views()
        principal = Principal(name="cli", kind="anonymous")
        features = extract_features(parsed.view, parsed.endpoint, scorer, explain=EXPLAIN_FEATURES)
        texts = second_stage_texts(stage, features, parsed, principal)
        decision, steps = plan_route(
            settings,
            views,
            parsed,
            headers,
            principal,
            scorer,
            explain=EXPLAIN_FEATURES,
            features=features,
            # One request, no event loop to keep free: the second stage runs inline here.
            embed=stage.probability(*texts) if stage is not None and texts is not None else None,
            embed_threshold=stage.model.threshold if stage is not None else 0.5,
        )
    except GatewayError as exc:
        print(exc.body().decode(), file=sys.stderr)
        return 1
    backends = {b.name: b for b in settings.backends}
    print(orjson.dumps(describe(decision, steps, backends), option=orjson.OPT_INDENT_2).decode())
    return 0


# ---- simulate / demo --------------------------------------------------------------------------------------


def _simulate(args: argparse.Namespace) -> int:
    configure_logging("info")
    extra = {"max_concurrency": args.max_concurrency} if args.max_concurrency else {}
    settings = SimulatorSettings(
        kind=args.kind, model=args.model, profile=args.profile, api_key=args.api_key, **extra
    )
    app, _ = create_simulator(settings)
    print(
        f"simulated {args.kind} backend serving {settings.resolved_model()} on http://{args.host}:{args.port}"
    )
    run(serve([(app, bind(args.host, args.port))]))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from gateway.app import create_app

    configure_logging("warning")
    host = "127.0.0.1"
    sims = {
        kind: SimulatorSettings(kind=kind, profile=args.profile) for kind in ("diffusion", "autoregressive")
    }
    sockets = {kind: bind(host, 0) for kind in sims}
    gateway_socket = bind(host, args.port)
    with tempfile.TemporaryDirectory(prefix="gateway-demo-") as tmp:
        keys_file = Path(tmp) / "keys.yaml"
        key = _add_key(keys_file, "demo", expires=None)
        settings = Settings(
            backends=[
                {
                    "name": kind,
                    "kind": kind,
                    "url": f"http://{host}:{sockets[kind].getsockname()[1]}",
                    "model": sim.resolved_model(),
                    "max_concurrency": sim.max_concurrency,
                }
                for kind, sim in sims.items()
            ],
            auth={"keys_file": str(keys_file)},
            usage={"url": f"sqlite:///{Path(tmp) / 'usage.db'}"},  # gone with the demo, as its key is
            # The simulators' fault injection header (README "Simulator") is forwarded in the demo.
            edge={"forward_headers": ["x-sim-fault", "x-sim-fault-diffusion", "x-sim-fault-autoregressive"]},
        )
        apps: list[tuple[ASGIApp, socket.socket]] = [
            (create_simulator(sim)[0], sockets[kind]) for kind, sim in sims.items()
        ]
        apps.append((create_app(settings), gateway_socket))
        base = f"http://{host}:{gateway_socket.getsockname()[1]}/v1"
        print(_demo_banner(base, key, args.profile), flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            run(serve(apps, "warning"))
    return 0


def _demo_banner(base: str, key: str, profile: str) -> str:
    body = '{"model": "auto", "messages": [{"role": "user", "content": "Hello!"}]}'
    return f"""
Gateway ready at {base} in front of two simulated vLLM backends ({profile} timings).
Development API key (shown once, valid while this demo runs):

    {key}

Try it with curl:

    curl {base}/chat/completions -H "Authorization: Bearer {key}" \\
      -H "Content-Type: application/json" -d '{body}'

or with the OpenAI SDK (pip install openai):

    from openai import OpenAI
    client = OpenAI(base_url="{base}", api_key="{key}")
    hello = [{{"role": "user", "content": "Hello!"}}]
    reply = client.chat.completions.with_raw_response.create(model="auto", messages=hello)
    print(reply.headers["x-gateway-backend"], reply.parse().choices[0].message.content)

Press Ctrl-C to stop.
"""


# ---- keys -------------------------------------------------------------------------------------------------


def _keys_file(args: argparse.Namespace) -> Path:
    if args.keys_file is not None:
        path: Path = args.keys_file
        return path
    if args.config is not None or os.environ.get("GATEWAY_CONFIG"):
        configured = load_settings(args.config).auth.keys_file
        if configured is None:
            raise ConfigError("auth.keys_file is not set in the configuration; pass --keys-file")
        return configured
    return DEFAULT_KEYS_FILE


_DURATION = re.compile(r"^(\d+)([dhm])$")


def _parse_expiry(value: str) -> datetime:
    match = _DURATION.match(value.strip())
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        delta = {"d": timedelta(days=amount), "h": timedelta(hours=amount), "m": timedelta(minutes=amount)}[
            unit
        ]
        return datetime.now(UTC) + delta
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(
            f"--expires: {value!r} is neither an ISO date/datetime nor a duration like 30d"
        ) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _add_key(path: Path, name: str, *, expires: datetime | None, **policy: object) -> str:
    keys = _read_keys(path)
    if keys.active(name) is not None:
        raise ConfigError(f"a key named {name!r} already exists; revoke it first")
    key = generate_key()
    try:
        record = KeyRecord(
            name=name, digest=digest(key), created=datetime.now(UTC), expires=expires, **policy
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid key: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from None
    keys.keys.append(record)
    keys.write(path)
    return key


def _keys_create(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    expires = _parse_expiry(args.expires) if args.expires else None
    key = _add_key(
        path,
        args.name,
        expires=expires,
        models=_csv(args.models),
        backends=_csv(args.backends),
        tier=args.tier,
        speed_tier=args.speed_tier,
        route_override=False if args.no_route_override else None,
        pacing=args.pacing,
        route_threshold=args.route_threshold,
        thinking=args.thinking,
        strip_reasoning=True if args.strip_reasoning else None,
        limits=_limits(args),
        admin=True if args.admin else None,
    )
    print(f"created key {args.name!r} in {path}; it is shown only now:", file=sys.stderr)
    print(key)
    return 0


def _read_keys(path: Path) -> KeyFile:
    try:
        return KeyFile.read(path)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _limits(args: argparse.Namespace) -> LimitSettings | None:
    values = {
        "requests_per_minute": args.rpm,
        "tokens_per_minute": args.tpm,
        "concurrent_requests": args.concurrency,
        "daily_tokens": args.daily_tokens,
    }
    if all(v is None for v in values.values()):
        return None
    try:
        return LimitSettings(**values)
    except ValidationError as exc:
        raise ConfigError(f"invalid limit: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from None


def _csv(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _keys_list(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    keys = _read_keys(path)
    now = datetime.now(UTC)
    print(f"{'NAME':<24} {'STATUS':<8} {'CREATED':<20} {'EXPIRES':<20} {'MODELS':<24} LIMITS")
    for record in keys.keys:
        status = "revoked" if record.revoked else "expired" if record.expired(now) else "active"
        expires = record.expires.strftime("%Y-%m-%d %H:%M") if record.expires else "never"
        models = ",".join(record.models) if record.models is not None else "*"
        limits = record.limits.model_dump(exclude_none=True) if record.limits is not None else {}
        shown = ",".join(f"{k}={v}" for k, v in limits.items()) or "-"
        created = f"{record.created:%Y-%m-%d %H:%M}"
        print(f"{record.name:<24} {status:<8} {created:<20} {expires:<20} {models:<24} {shown}")
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    keys = _read_keys(path)
    record = keys.active(args.name)
    if record is None:
        raise ConfigError(f"no active key named {args.name!r} in {path}")
    keys.keys = [r.model_copy(update={"revoked": True}) if r is record else r for r in keys.keys]
    keys.write(path)
    print(f"revoked key {args.name!r}; a running gateway stops accepting it within auth.reload_interval")
    return 0


if __name__ == "__main__":
    sys.exit(main())
