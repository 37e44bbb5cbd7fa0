"""``gateway keys create|list|revoke``: the API key file, digests only; a new key is printed once."""

from __future__ import annotations

import argparse
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

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
        ("list", _list, "list keys (never the keys themselves)"),
        ("revoke", _revoke, "revoke a key"),
    ):
        p = keys.add_parser(name, help=helptext)
        if name != "list":
            p.add_argument("name")
        if name == "create":
            _add_policy_arguments(p)
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


def add_key(path: Path, name: str, *, expires: datetime | None, **policy: object) -> str:
    """Add a key named ``name`` to the key file at ``path``; the key itself is returned, never stored."""
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


def _list(args: argparse.Namespace) -> int:
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


def _revoke(args: argparse.Namespace) -> int:
    path = _keys_file(args)
    keys = _read_keys(path)
    record = keys.active(args.name)
    if record is None:
        raise ConfigError(f"no active key named {args.name!r} in {path}")
    keys.keys = [r.model_copy(update={"revoked": True}) if r is record else r for r in keys.keys]
    keys.write(path)
    print(f"revoked key {args.name!r}; a running gateway stops accepting it within auth.reload_interval")
    return 0
