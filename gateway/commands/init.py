"""``gateway init``: a starter ``gateway.yaml`` and an empty ``keys.yaml`` in a directory.

The step between ``gateway demo`` (everything in one process, a throw-away key) and production: a real
configuration file and key file that ``gateway keys create`` and ``gateway serve`` use, in front of two
``gateway simulate`` backends on loopback at first, and of the real vLLM servers later (change the two
``url`` lines, or run ``gateway init --force`` with their URLs). The file is validated with the same loader
``gateway serve`` uses before it replaces anything.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from gateway.auth.keys import KeyFile
from gateway.config import ConfigError, load_settings

__all__ = ["add_parser", "init", "render_config"]

CONFIG_NAME = "gateway.yaml"
KEYS_NAME = "keys.yaml"
DIFFUSION_MODEL = "nvidia/diffusiongemma-26B-A4B-it-NVFP4"
AUTOREGRESSIVE_MODEL = "google/gemma-4-26B-A4B-it"
DEFAULT_DIFFUSION_URL = "http://127.0.0.1:8001"
DEFAULT_AUTOREGRESSIVE_URL = "http://127.0.0.1:8002"

_TEMPLATE = """\
# diffusion-gateway: a starter configuration written by `gateway init`.
# Every other key, with its default, is in deploy/gateway.example.yaml of the repository; any key can be
# overridden from the environment (GATEWAY_<SECTION>__<KEY>). Relative paths are resolved against this
# file's directory.
#
# With the simulated backends (no GPU), each command in its own terminal or with a trailing &:
#   gateway simulate --kind diffusion --port {diffusion_port}
#   gateway simulate --kind autoregressive --port {autoregressive_port}
#   gateway keys create alice --config {config_name}      # prints the key once; {keys_name} keeps its digest
#   gateway serve --config {config_name}
#
# In front of real vLLM servers: set each backend's url to its address on the private network and give
# the gateway each server's --api-key through the environment, never in this file:
#   export GATEWAY_BACKENDS__DIFFUSION__API_KEY=...  GATEWAY_BACKENDS__AUTOREGRESSIVE__API_KEY=...

server:
  host: {host}
  port: {port}

backends:
  - name: diffusion
    kind: diffusion
    url: {diffusion_url}
    model: {diffusion_model}
    max_concurrency: 4        # what the server was started with (--max-num-seqs)
    diffusion:                # how the server was started; labels every request sent there
      canvas_length: 256      # --diffusion-config canvas_length
      max_denoising_steps: 48 # --diffusion-config max_denoising_steps
  - name: autoregressive
    kind: autoregressive
    url: {autoregressive_url}
    model: {autoregressive_model}

auth:
  keys_file: {keys_name}      # API key digests; manage with `gateway keys ... --config {config_name}`

usage:
  url: sqlite:///usage.db   # the usage ledger, beside this file: `gateway usage --config {config_name}`
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``gateway init`` on the ``gateway`` command's subparsers."""
    p = sub.add_parser("init", help="write a starter gateway.yaml and keys.yaml into a directory")
    p.add_argument("--dir", type=Path, default=Path("."), help="where to write them (default: here)")
    p.add_argument("--force", action="store_true", help="replace an existing gateway.yaml")
    p.add_argument("--host", default="127.0.0.1", help="the gateway's bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="the gateway's port (default 8080)")
    p.add_argument("--diffusion-url", default=DEFAULT_DIFFUSION_URL, help="the diffusion backend")
    p.add_argument("--autoregressive-url", default=DEFAULT_AUTOREGRESSIVE_URL, help="the AR backend")
    p.set_defaults(func=_init_command)


def render_config(
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    diffusion_url: str = DEFAULT_DIFFUSION_URL,
    autoregressive_url: str = DEFAULT_AUTOREGRESSIVE_URL,
) -> str:
    """The starter configuration's text."""
    return _TEMPLATE.format(
        host=host,
        port=port,
        diffusion_url=diffusion_url,
        autoregressive_url=autoregressive_url,
        diffusion_port=_port_of(diffusion_url, DEFAULT_DIFFUSION_URL),
        autoregressive_port=_port_of(autoregressive_url, DEFAULT_AUTOREGRESSIVE_URL),
        diffusion_model=DIFFUSION_MODEL,
        autoregressive_model=AUTOREGRESSIVE_MODEL,
        config_name=CONFIG_NAME,
        keys_name=KEYS_NAME,
    )


def init(directory: Path, text: str, *, force: bool = False) -> tuple[Path, Path, bool]:
    """Write ``gateway.yaml`` (validated first; an existing one only with ``force``) and ``keys.yaml`` (only
    when absent: replacing a key file would revoke every key in it). Returns both paths and whether the
    key file was written."""
    config = directory / CONFIG_NAME
    keys = directory / KEYS_NAME
    if config.exists() and not force:
        raise ConfigError(f"{config} already exists; pass --force to replace it")
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".gateway-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        load_settings(tmp, environ={})  # a bad --diffusion-url fails here, before anything is replaced
        os.replace(tmp, config)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    wrote_keys = not keys.exists()
    if wrote_keys:
        KeyFile().write(keys)
    return config, keys, wrote_keys


def _init_command(args: argparse.Namespace) -> int:
    text = render_config(
        host=args.host,
        port=args.port,
        diffusion_url=args.diffusion_url,
        autoregressive_url=args.autoregressive_url,
    )
    config, keys, wrote_keys = init(args.dir, text, force=args.force)
    print(f"wrote {config}")
    print(f"wrote {keys}" if wrote_keys else f"kept {keys}: it already exists, with its keys")
    steps = [] if args.dir == Path(".") else [f"cd {args.dir}"]
    for kind, url, default in (
        ("diffusion", args.diffusion_url, DEFAULT_DIFFUSION_URL),
        ("autoregressive", args.autoregressive_url, DEFAULT_AUTOREGRESSIVE_URL),
    ):
        if _is_loopback(url):
            steps.append(f"gateway simulate --kind {kind} --port {_port_of(url, default)} &")
    steps += [f"gateway keys create alice --config {CONFIG_NAME}", f"gateway serve --config {CONFIG_NAME}"]
    print("\nNext:\n" + "\n".join(f"  {step}" for step in steps))
    return 0


def _is_loopback(url: str) -> bool:
    return url.startswith(("http://127.0.0.1:", "http://localhost:"))


def _port_of(url: str, default: str) -> str:
    """The port of a backend URL, for the `gateway simulate` hints (the URL itself is validated later)."""
    tail = url.rsplit(":", 1)[-1].split("/", 1)[0]
    return tail if tail.isdigit() else default.rsplit(":", 1)[-1]
