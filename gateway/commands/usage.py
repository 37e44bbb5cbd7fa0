"""``gateway usage``: the ledger summed by day, key, backend, model, API or tier, as a table, CSV or JSON."""

from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from gateway.config import CONFIG_ENV_VAR, ConfigError, load_settings
from gateway.usage.query import GROUPS, KINDS, UsageQuery, parse_since, summarize
from gateway.usage.settings import UsageSettings, engine_url
from gateway.usage.store import UsageStore

__all__ = ["database_url", "register"]


def register(sub: Any) -> None:
    """Add the ``usage`` command to the CLI's subparsers."""
    p = sub.add_parser("usage", help="read the usage ledger: who used which backend, for how long")
    p.add_argument("--config", type=Path, help="YAML configuration (default: $GATEWAY_CONFIG)")
    p.add_argument(
        "--url",
        help="the ledger's database URL (default: usage.url of --config or $GATEWAY_CONFIG, "
        "else $GATEWAY_USAGE__URL, else sqlite:///usage.db)",
    )
    p.add_argument("--key", help="one key name or JWT subject only")
    p.add_argument("--kind", choices=KINDS, help="one kind of principal only (API keys, JWT subjects...)")
    p.add_argument("--since", default="7d", help="a duration (30m, 12h, 7d, 4w) or an ISO date (default 7d)")
    p.add_argument("--by", choices=GROUPS, default="key", help="group rows by (default key)")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.add_argument("--limit", type=_limit, default=1000, help="at most this many rows (default 1000)")
    p.set_defaults(func=_usage)


def _limit(text: str) -> int:
    """--limit: a positive integer (a negative LIMIT means none to SQLite and is an error to PostgreSQL)."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"an integer from 1 to 1000000, not {text[:20]!r}")
    return int(text)


def database_url(url: str | None, config: Path | None) -> URL:
    """The usage database's URL: ``url`` when given, else ``usage.url`` of ``config`` (or
    $GATEWAY_CONFIG), else $GATEWAY_USAGE__URL, else the default ``sqlite:///usage.db``."""
    if url is not None:
        try:
            return engine_url(url)
        except ValueError as exc:
            raise ConfigError(f"--url: {exc}") from None
    if config is None and not os.environ.get(CONFIG_ENV_VAR):
        # No configuration to read: the ledger's own settings (GATEWAY_USAGE__URL, else ./usage.db).
        return engine_url(os.environ.get("GATEWAY_USAGE__URL") or UsageSettings().url.get_secret_value())
    return engine_url(load_settings(config).usage.url.get_secret_value())


def _usage(args: argparse.Namespace) -> int:
    try:
        since = parse_since(args.since)
    except ValueError as exc:
        print(f"gateway: --{exc}", file=sys.stderr)
        return 2
    store = UsageStore(database_url(args.url, args.config))
    try:
        query = UsageQuery(
            since=since, by=args.by, principal=args.key, principal_kind=args.kind, limit=args.limit
        )
        rows = summarize(store, query)
    except SQLAlchemyError as exc:
        print(
            f"gateway: cannot read the usage ledger at {store.where}: {type(exc).__name__}", file=sys.stderr
        )
        return 1
    finally:
        store.dispose()
    if args.format == "json":
        print(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())
    elif args.format == "csv":
        _csv(rows, args.by)
    else:
        _table(rows, args.by)
    return 0


def _columns(by: str) -> list[str]:
    return [
        by,
        *(["kind"] if by == "key" else []),  # an API key and a JWT subject may share a name
        "requests",
        "errors",
        "fallbacks",
        "prompt_tokens",
        "completion_tokens",
        "reasoning_tokens",
        "backend_seconds",
        "avg_ttfb_ms",
        "avg_canvas_fill",
    ]


def _csv(rows: list[dict[str, Any]], by: str) -> None:
    writer = csv.DictWriter(sys.stdout, fieldnames=_columns(by), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def _table(rows: list[dict[str, Any]], by: str) -> None:
    columns = _columns(by)
    cells = [[_cell(row[c]) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    print("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for line in cells:
        first, *rest = line
        numbers = [v.rjust(w) for v, w in zip(rest, widths[1:], strict=True)]
        print("  ".join([first.ljust(widths[0]), *numbers]).rstrip())
    if not rows:
        print("(no usage in this period)")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
