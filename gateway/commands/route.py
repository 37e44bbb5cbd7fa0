"""``gateway route``: where a request body would be routed, and why, without sending it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gateway.config import load_settings

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def _route(args: argparse.Namespace) -> int:
    import orjson
    from starlette.datastructures import Headers

    from gateway.app import routing_model
    from gateway.auth.principal import Principal
    from gateway.backends.state import BackendPool
    from gateway.errors import GatewayError
    from gateway.proxy.body import parse_request
    from gateway.proxy.planning import (
        EXPLAIN_FEATURES,
        describe,
        dry_run_endpoint,
        plan_route,
    )

    settings = load_settings(args.config)
    body = sys.stdin.buffer.read() if str(args.file) == "-" else args.file.read_bytes()
    headers = Headers({k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in args.header)})
    scorer = routing_model(settings)
    try:
        endpoint = dry_run_endpoint(body, args.api, headers)
        parsed = parse_request(
            body,
            endpoint,
            max_n=settings.server.max_n,
            max_output_tokens=None,
            max_depth=settings.server.max_json_depth,
        )
        views = BackendPool(settings.backends, settings.routing.breaker).views()
        principal = Principal(name="cli", kind="anonymous")
        decision, steps = plan_route(
            settings, views, parsed, headers, principal, scorer, explain=EXPLAIN_FEATURES
        )
    except GatewayError as exc:
        print(exc.body().decode(), file=sys.stderr)
        return 1
    backends = {b.name: b for b in settings.backends}
    print(orjson.dumps(describe(decision, steps, backends), option=orjson.OPT_INDENT_2).decode())
    return 0
