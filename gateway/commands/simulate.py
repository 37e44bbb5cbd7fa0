"""``gateway simulate``: one simulated vLLM backend, for development and tests without a GPU."""

from __future__ import annotations

import argparse

from gateway.server import bind, run, serve
from gateway.simulator import PROFILES, SimulatorSettings, create_simulator
from gateway.telemetry.logs import configure_logging

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("simulate", help="run one simulated vLLM backend")
    p.add_argument("--kind", choices=["diffusion", "autoregressive"], required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--model", default="", help="the model id it serves (default: by kind)")
    p.add_argument("--profile", choices=sorted(PROFILES), default="h100")
    p.add_argument("--max-concurrency", type=int, default=None, help="like --max-num-seqs")
    p.add_argument("--api-key", default=None, help="require this key, like vllm serve --api-key")
    p.set_defaults(func=_simulate)


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
