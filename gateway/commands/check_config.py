"""``gateway check-config``: validate a configuration as ``gateway serve`` would, and print it with its
secrets masked."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import yaml

from gateway.config import load_settings

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check-config", help="validate a configuration and print it, secrets masked")
    p.add_argument("--config", type=Path)
    p.set_defaults(func=_check_config)


def _check_config(args: argparse.Namespace) -> int:
    from gateway.app import create_app

    settings = load_settings(args.config)
    app = create_app(settings)  # also loads the key file and JWT key material, as serve would
    # Its clients (upstream, identity provider, Redis) were made but never used: closed all the same.
    asyncio.run(app.aclose())
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
