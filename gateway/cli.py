"""The ``gateway`` command: init, serve, demo, simulate, keys, route, router, check-config, usage."""

from __future__ import annotations

import argparse
import sys

from gateway.commands import check_config, demo, init, keys, route, router, serve, simulate
from gateway.commands import usage as usage_cli
from gateway.config import ConfigError

__all__ = ["main"]


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
    # Each subcommand's arguments and code live in its module under gateway/commands/, in help order.
    for command in (init, serve, demo, simulate, keys, route, router, check_config):
        command.add_parser(sub)
    usage_cli.register(sub)  # gateway usage
    return parser


if __name__ == "__main__":
    sys.exit(main())
