"""``gateway demo``: two simulated backends and the gateway in one process on loopback, with a development
key that lives as long as the demo."""

from __future__ import annotations

import argparse
import contextlib
import secrets
import socket
import tempfile
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp

from gateway.commands.keys import add_key
from gateway.commands.serve import port_number
from gateway.config import Settings
from gateway.server import bind, run, serve
from gateway.simulator import PROFILES, SimulatorSettings, create_simulator
from gateway.telemetry.logs import configure_logging

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="simulated backends + gateway on loopback, with a development key")
    p.add_argument("--port", type=port_number, default=8080, help="the gateway's port (default 8080)")
    p.add_argument(
        "--backend-ports",
        type=_backend_ports,
        default=(0, 0),
        metavar="DIFFUSION,AUTOREGRESSIVE",
        help="the simulated backends' ports, e.g. 8001,8002 (default: any free ports)",
    )
    p.add_argument("--profile", choices=sorted(PROFILES), default="h100", help="simulated timing profile")
    p.add_argument(
        "--shadow",
        action="store_true",
        help="shadow evaluation on every routed request, prompts kept: regret and missed savings in "
        "/metrics, labels to retrain on (docs/shadow.md)",
    )
    p.add_argument(
        "--scorer-model",
        default=None,
        metavar="FILE",
        help="route with this scorer model (e.g. one retrained on the demo's labels)",
    )
    p.add_argument(
        "--verbose", action="store_true", help="log every request (the request log, JSON on stderr)"
    )
    p.set_defaults(func=_demo)


def _backend_ports(text: str) -> tuple[int, int]:
    """--backend-ports: two port numbers, the diffusion backend's first."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"two ports separated by a comma, like 8001,8002, not {text[:40]!r}")
    return port_number(parts[0].strip()), port_number(parts[1].strip())


def _demo(args: argparse.Namespace) -> int:
    from gateway.app import create_app

    # Quiet by default, so the banner stays readable; --verbose shows the request log a gateway writes.
    configure_logging("info" if args.verbose else "warning")
    host = "127.0.0.1"
    sims = {
        kind: SimulatorSettings(kind=kind, profile=args.profile) for kind in ("diffusion", "autoregressive")
    }
    hint = "choose other ports with --backend-ports, or leave it out for any free ports"
    sockets = {kind: bind(host, port, hint=hint) for kind, port in zip(sims, args.backend_ports, strict=True)}
    gateway_socket = bind(host, args.port, hint="choose another port with --port")
    with tempfile.TemporaryDirectory(prefix="gateway-demo-") as tmp:
        keys_file = Path(tmp) / "keys.yaml"
        key = add_key(keys_file, "demo", expires=None)
        usage_url = f"sqlite:///{Path(tmp) / 'usage.db'}"  # gone with the demo, as its key is
        extra: dict[str, Any] = {}
        metrics_token = secrets.token_urlsafe(24)
        if args.shadow:
            extra["shadow"] = {"share": 1.0, "store_content": True}
            extra["telemetry"] = {"metrics_token": metrics_token}
        if args.scorer_model is not None:
            extra["routing"] = {"scorer": {"model": str(Path(args.scorer_model).resolve())}}
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
            usage={"url": usage_url},
            # The simulators' fault injection header (docs/simulator.md) is forwarded in the demo.
            edge={"forward_headers": ["x-sim-fault", "x-sim-fault-diffusion", "x-sim-fault-autoregressive"]},
            **extra,
        )
        apps: list[tuple[ASGIApp, socket.socket]] = [
            (create_simulator(sim)[0], sockets[kind]) for kind, sim in sims.items()
        ]
        apps.append((create_app(settings), gateway_socket))
        base = f"http://{host}:{gateway_socket.getsockname()[1]}/v1"
        banner = _banner(base, key, args.profile)
        if args.shadow:
            banner += _shadow_banner(base, key, metrics_token, usage_url)
        print(banner + "\nPress Ctrl-C to stop.\n", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            run(serve(apps, "warning"))
    return 0


def _banner(base: str, key: str, profile: str) -> str:
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
"""


def _shadow_banner(base: str, key: str, metrics_token: str, usage_url: str) -> str:
    root = base.removesuffix("/v1")
    body = '{"model": "auto", "messages": [{"role": "user", "content": "Who pays the escrow fees?"}]}'
    return f"""
Shadow evaluation is on: every routed request is also answered by the other backend, and a judge
compares the two answers. The simulated diffusion backend answers worse on money and law (escrow,
probate, liens...), which the router calls easy. Send one:

    curl {base}/chat/completions -H "Authorization: Bearer {key}" \\
      -H "Content-Type: application/json" -d '{body}'

and watch the regret appear, by score bucket:

    curl -s {root}/metrics -H "Authorization: Bearer {metrics_token}" \\
      | grep -E '^gateway_route_(regret|missed_saving)_total'

Label the judged requests, retrain on them (pip install -e ./training) and route with the result:

    gateway router labels --url {usage_url} --since 1h --out labels.jsonl
    gateway router train --no-builtin --data labels.jsonl --out retrained.bin.gz
    gateway demo --shadow --scorer-model retrained.bin.gz
"""
