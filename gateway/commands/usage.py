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

__all__ = ["existing", "ledger_url", "register"]

_URL_VAR = "GATEWAY_USAGE__URL"
# The name a group's row has when its column is empty: a request refused before any backend was tried
# (a permission, a limit, a bad body) has no backend; a principal without a tier, no tier.
_NO_NAME = {"backend": "(none: rejected before a backend)", "tier": "(no tier)"}


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


def _usage(args: argparse.Namespace) -> int:
    try:
        since = parse_since(args.since)
    except ValueError as exc:
        print(f"gateway: --{exc}", file=sys.stderr)
        return 2
    url, source = ledger_url(args)
    found = existing(url, source)
    if found is None:
        return 1
    store = UsageStore(found)
    print(f"gateway: usage ledger {store.where} ({source})", file=sys.stderr)
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


def ledger_url(args: argparse.Namespace) -> tuple[URL, str]:
    """The usage database's URL from ``args.url`` or ``args.config``, and where it came from in words."""
    if args.url is not None:
        try:
            return engine_url(args.url), "from --url"
        except ValueError as exc:
            raise ConfigError(f"--url: {exc}") from None
    from_environment = os.environ.get(_URL_VAR)
    default = f"the default, {UsageSettings().url.get_secret_value()} in the working directory"
    if args.config is None and not os.environ.get(CONFIG_ENV_VAR):
        # No configuration to read: the ledger's own settings (GATEWAY_USAGE__URL, else ./usage.db).
        if from_environment:
            return engine_url(from_environment), f"from ${_URL_VAR}"
        return engine_url(UsageSettings().url.get_secret_value()), f"{default}, as no --config was given"
    config = args.config if args.config is not None else Path(os.environ[CONFIG_ENV_VAR])
    usage = load_settings(args.config).usage
    url = engine_url(usage.url.get_secret_value())
    # The environment overrides the file, as it does for the gateway itself.
    if from_environment:
        return url, f"from ${_URL_VAR}"
    if "url" not in usage.model_fields_set:
        return url, f"{default}, as {config} sets no usage.url"
    return url, f"usage.url of {config}"


def existing(url: URL, source: str) -> URL | None:
    """``url``, a SQLite file's path made absolute; None, said on stderr, when that file does not exist:
    opening it would create an empty ledger, and an empty table would look like no traffic."""
    if url.get_backend_name() != "sqlite":
        return url
    # The database as a path of its own, so the message names the file wherever the command runs.
    path = Path(url.database or "").resolve()
    if not path.is_file():
        print(
            f"gateway: no usage ledger at {path} ({source}); pass --config with the gateway's "
            "configuration file, or --url",
            file=sys.stderr,
        )
        return None
    return url.set(database=str(path))


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


def _named(rows: list[dict[str, Any]], by: str) -> list[dict[str, Any]]:
    """The rows with a name for the group a column leaves empty (JSON keeps null): a row without a name
    reads as a broken one."""
    name = _NO_NAME.get(by, "(none)")
    return [{**row, by: name} if row[by] is None else row for row in rows]


def _csv(rows: list[dict[str, Any]], by: str) -> None:
    writer = csv.DictWriter(sys.stdout, fieldnames=_columns(by), lineterminator="\n")
    writer.writeheader()
    writer.writerows(_named(rows, by))


def _table(rows: list[dict[str, Any]], by: str) -> None:
    rows = _named(rows, by)
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
