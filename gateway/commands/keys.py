"""``gateway keys create|list|rotate|revoke|purge``: the API key file, digests only; a new key is printed
once.

A name is one principal (its limits, usage rows and metrics are counted by name), and may have several
records: a rotation adds a key under the same name and keeps the old one valid for a grace period, so
clients move to the new key without a moment in which neither works.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from gateway.auth.keys import KeyFile, KeyRecord, digest, generate_key
from gateway.config import ConfigError, load_settings
from gateway.limits.settings import LimitSettings

__all__ = ["DEFAULT_KEYS_FILE", "add_key", "add_parser"]

DEFAULT_KEYS_FILE = Path("keys.yaml")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = sub.add_parser("keys", help="manage API keys").add_subparsers(required=True, metavar="ACTION")
    for name, func, helptext in (
        ("create", _create, "create a key; it is printed once"),
        ("list", _list, "list keys and every setting of each (never the keys themselves)"),
        ("rotate", _rotate, "a new key under the same name; the old one stays valid for --grace"),
        ("revoke", _revoke, "revoke a key (every key of that name)"),
        ("purge", _purge, "remove revoked and expired keys from the file"),
    ):
        p = keys.add_parser(name, help=helptext)
        if name in ("create", "rotate", "revoke"):
            p.add_argument("name")
        if name == "create":
            _add_policy_arguments(p)
        if name == "rotate":
            p.add_argument(
                "--grace",
                default="24h",
                help="how long the old key stays valid: a duration (24h, 30m, 7d) or 0 (default 24h)",
            )
            p.add_argument("--expires", help="the new key's expiry (default: the old key's)")
        if name == "list":
            p.add_argument("--format", choices=["table", "json"], default="table")
        if name == "purge":
            p.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
        p.add_argument("--keys-file", type=Path, help="default: auth.keys_file of --config, else ./keys.yaml")
        p.add_argument("--config", type=Path)
        p.set_defaults(func=func)


def _add_policy_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expires", help="ISO date or datetime, or a duration such as 30d or 12h")
    p.add_argument("--models", help="comma-separated model ids or backend names (and/or 'auto')")
    p.add_argument("--backends", help="comma-separated backend names its requests may be routed to")
    p.add_argument("--tier", help="an auth.tiers entry whose policy applies to the key")
    p.add_argument("--speed-tier", help="a routing.speed_tiers entry applied to its diffusion requests")
    p.add_argument("--no-route-override", action="store_true", help="forbid x-gateway-route and aliases")
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


# ASCII digits: \d would take any script's digits, which int() reads as numbers too.
_DURATION = re.compile(r"^([0-9]{1,6})([dhm])$")
_UNIT = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}


def _duration(value: str) -> timedelta | None:
    """``30d``, ``12h``, ``45m`` as a timedelta; None when ``value`` is not one."""
    match = _DURATION.match(value.strip())
    return int(match.group(1)) * _UNIT[match.group(2)] if match else None


def _parse_expiry(value: str) -> datetime:
    delta = _duration(value)
    if delta is not None:
        return datetime.now(UTC) + delta
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(
            f"--expires: {value!r} is neither an ISO date/datetime nor a duration like 30d"
        ) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def add_key(path: Path, name: str, *, expires: datetime | None, **policy: object) -> str:
    """Add a key named ``name`` to the key file at ``path``; the key itself is returned, never stored."""
    keys = _read_keys(path)
    if keys.unrevoked(name):
        raise ConfigError(f"a key named {name!r} already exists; rotate it, or revoke it first")
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


def _create(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    expires = _parse_expiry(args.expires) if args.expires else None
    key = add_key(
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


def _status(record: KeyRecord, keys: KeyFile, now: datetime) -> str:
    if record.revoked:
        return "revoked"
    if record.expired(now):
        return "expired"
    newer = any(
        r is not record and r.name == record.name and not r.revoked and r.created > record.created
        for r in keys.keys
    )
    return "retiring" if newer else "active"  # retiring: rotated, valid until it expires


# Shown in their own columns; the digest never.
_COLUMNS = frozenset({"name", "digest", "created", "expires", "revoked"})


def _settings(record: KeyRecord) -> dict[str, Any]:
    """Every setting the record gives its key, by field name (a field added to KeyRecord shows up too)."""
    shown: dict[str, Any] = {}
    for field in KeyRecord.model_fields:
        value = getattr(record, field)
        if field in _COLUMNS or value is None:
            continue
        if isinstance(value, LimitSettings):
            shown.update(value.model_dump(exclude_none=True))
        else:
            shown[field] = value
    return shown


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _list(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    keys = _read_keys(path)
    now = datetime.now(UTC)
    if args.format == "json":
        listed = [
            {
                "name": r.name,
                "status": _status(r, keys, now),
                "created": r.created,
                "expires": r.expires,
                "revoked": r.revoked,
                **_settings(r),
            }
            for r in keys.keys
        ]
        print(orjson.dumps(listed, option=orjson.OPT_INDENT_2).decode())
        return 0
    rows = [
        (
            record.name,
            _status(record, keys, now),
            f"{record.created:%Y-%m-%d %H:%M}",
            f"{record.expires:%Y-%m-%d %H:%M}" if record.expires else "never",
            " ".join(f"{k}={_shown(v)}" for k, v in _settings(record).items()) or "-",
        )
        for record in keys.keys
    ]
    header = ("NAME", "STATUS", "CREATED (UTC)", "EXPIRES (UTC)", "SETTINGS")
    widths = [max([len(header[i]), *(len(row[i]) for row in rows)]) for i in range(4)]
    for row in (header, *rows):
        print("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[4]]))
    if not rows:
        print(f"(no keys in {path})")
    return 0


def _rotate(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    keys = _read_keys(path)
    now = datetime.now(UTC)
    grace = timedelta(0) if args.grace.strip() == "0" else _duration(args.grace)
    if grace is None:
        raise ConfigError(f"--grace: {args.grace[:40]!r} is not a duration like 24h, 30m or 7d, nor 0")
    usable = [r for r in keys.unrevoked(args.name) if not r.expired(now)]
    if not usable:
        raise ConfigError(
            f"no usable key named {args.name!r} in {path} (a revoked or expired key is not rotated: "
            "create a new one)"
        )
    current = max(usable, key=lambda r: r.created)
    key = generate_key()
    expires = _parse_expiry(args.expires) if args.expires else current.expires
    # The same record but its digest, creation and expiry: one principal, with the same policy.
    new = current.model_copy(update={"digest": digest(key), "created": now, "expires": expires})
    until = now + grace

    retiring = {id(r) for r in usable}

    def retired(record: KeyRecord) -> KeyRecord:
        if id(record) in retiring and (record.expires is None or record.expires > until):
            return record.model_copy(update={"expires": until})
        return record

    keys.keys = [*map(retired, keys.keys), new]
    keys.write(path)
    old = f"until {until:%Y-%m-%d %H:%M} UTC" if grace else "no longer"
    print(
        f"rotated key {args.name!r} in {path}: the new key is shown only now; the old one works {old}",
        file=sys.stderr,
    )
    print(key)
    return 0


def _revoke(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    keys = _read_keys(path)
    records = keys.unrevoked(args.name)
    if not records:
        raise ConfigError(f"no active key named {args.name!r} in {path}")
    # Every key of the name: a rotated name's old key too, still in its grace period.
    revoked = {id(r) for r in records}
    keys.keys = [r.model_copy(update={"revoked": True}) if id(r) in revoked else r for r in keys.keys]
    keys.write(path)
    print(f"revoked key {args.name!r}; a running gateway stops accepting it within auth.reload_interval")
    return 0


def _purge(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    keys = _read_keys(path)
    now = datetime.now(UTC)
    total = len(keys.keys)
    gone = [r for r in keys.keys if r.revoked or r.expired(now)]
    verb = "would remove" if args.dry_run else "removed"
    for record in gone:
        status = _status(record, keys, now)
        print(f"{verb} {record.name} ({status}, created {record.created:%Y-%m-%d %H:%M} UTC)")
    if gone and not args.dry_run:
        keys.keys = [r for r in keys.keys if not (r.revoked or r.expired(now))]
        keys.write(path)
    print(f"{verb} {len(gone)} of {total} keys in {path}")
    return 0
