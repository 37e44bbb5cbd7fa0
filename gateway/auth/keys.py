"""API keys: generation, the key file, and lookup by digest.

The key file holds only SHA-256 digests: a leaked file does not leak a usable key. A key is shown once,
when it is created. The file is re-read when it changes (``KeyStore.watch``), so ``gateway keys create``,
``rotate``, ``revoke`` and ``purge`` take effect on a running gateway without a restart. A name may have
several records (a rotated key and its successor): each digest is a key, and the name one principal.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import secrets
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.limits.settings import LimitSettings

__all__ = ["KEY_PREFIX", "KeyFile", "KeyRecord", "KeyStore", "digest", "generate_key"]

log = logging.getLogger("gateway.auth")

# Recognisable, so that secret scanners and people can tell a gateway key from a JWT or a vendor key.
KEY_PREFIX = "gw-"


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


class KeyRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    created: datetime
    expires: datetime | None = None
    models: list[str] | None = None
    backends: list[str] | None = None
    route_override: bool | None = None
    speed_tier: str | None = None
    thinking: bool | None = None
    thinking_override: bool | None = None
    strip_reasoning: bool | None = None
    pacing: bool | None = None
    route_threshold: float | None = Field(None, gt=0, lt=1)  # routing.scorer threshold for this key
    tier: str | None = None
    limits: LimitSettings | None = None
    admin: bool | None = None  # the admin scope (TierPolicy.admin)
    revoked: bool = False

    def expired(self, now: datetime) -> bool:
        return self.expires is not None and now >= self.expires


class KeyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keys: list[KeyRecord] = Field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> KeyFile:
        """Read and validate; raises ``ValueError`` with a readable reason."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"key file {path} is invalid: {_yaml_problem(exc)}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"key file {path} is invalid: {_problems(exc, data, text)}") from None

    def write(self, path: Path) -> None:
        """Atomically replace the file, readable by its owner only."""
        data = self.model_dump(mode="json", exclude_none=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".keys-", suffix=".yaml")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                yaml.safe_dump(data, fh, sort_keys=False)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def unrevoked(self, name: str) -> list[KeyRecord]:
        """The records of ``name`` not revoked, expired ones included: more than one after a rotation."""
        return [k for k in self.keys if k.name == name and not k.revoked]


# ---- what a broken key file is told: never a value from it -----------------------------------------------
#
# A key pasted where its digest belongs, or a digest cut short, must not reach a log line: pydantic's own
# message shows the value (input_value=...), PyYAML's a snippet of the line. These say where (line, key
# entry and its name, field) and what is expected instead.

_EXPECTED = {
    "digest": "64 lowercase hexadecimal characters, the SHA-256 of the key (`gateway keys create` writes it)",
    "name": "1 to 64 letters, digits and _ . @ -, starting with a letter or digit",
}
# What an error's location may show of the file's own words: a field name (unknown ones too), no value.
_FIELD_NAME = re.compile(r"^[a-z_]{1,32}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
_MAX_PROBLEMS = 5


def _problems(exc: ValidationError, data: object, text: str) -> str:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    found = [_problem(error, data, text) for error in errors[:_MAX_PROBLEMS]]
    if len(errors) > _MAX_PROBLEMS:
        found.append(f"and {len(errors) - _MAX_PROBLEMS} more")
    return "; ".join(found)


def _problem(error: Any, data: object, text: str) -> str:
    loc: tuple[int | str, ...] = tuple(error["loc"])
    where = _where(loc, data)
    line = _line(text, loc)
    field = loc[-1] if loc and isinstance(loc[-1], str) else None
    if error["type"] == "extra_forbidden":
        what = "not a known field here"
    elif field in _EXPECTED and error["type"].startswith("string"):
        what = f"expected {_EXPECTED[field]}"
        if field == "digest" and _value(data, loc, str).startswith(KEY_PREFIX):
            what += "; this looks like a key itself, which never belongs in the file"
    else:
        what = str(error["msg"])
    return f"{f'line {line}: ' if line else ''}{where}: {what}"


def _where(loc: tuple[int | str, ...], data: object) -> str:
    """``keys[2] (bob).digest``: the entry's name only when it is a valid one, a field name only when it
    looks like one (an unknown field's name may be anything pasted there)."""
    parts: list[str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int):
            parts.append(f"[{part}]")
            name = _value(data, (*loc[: i + 1], "name"), str)
            if _NAME.match(name):
                parts.append(f" ({name})")
        else:
            shown = part if _FIELD_NAME.match(part) else "(an unknown field)"
            parts.append(f".{shown}" if parts else shown)
    return "".join(parts) or "the file"


def _value(data: object, loc: tuple[int | str, ...], kind: type[str]) -> str:
    """The value at ``loc`` when it is a ``kind``, else ""."""
    for part in loc:
        if isinstance(part, int) and isinstance(data, list) and 0 <= part < len(data):
            data = data[part]
        elif isinstance(part, str) and isinstance(data, dict):
            data = data.get(part)
        else:
            return ""
    return data if isinstance(data, kind) else ""


def _line(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The line (from 1) of the YAML node at ``loc``, or None."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        elif isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == part), None)
            if pair is None:
                break
            line = pair[0].start_mark.line + 1
            node = pair[1]
            continue
        else:
            break
        line = node.start_mark.line + 1
    return line


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's problem and its place, without the snippet of the line its message quotes."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or "not valid YAML"
    # A quoted part of a problem is text from the file (a tag, a character): left out.
    problem = re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", str(problem))[:100]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}not valid YAML ({problem})"


class KeyStore:
    """The live set of keys, re-read from its file when the file changes."""

    def __init__(self, path: Path, *, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.path = path
        self._now = now
        self._records: tuple[KeyRecord, ...] = ()
        self._by_digest: dict[str, KeyRecord] = {}
        self._stamp: tuple[int, int, int] | None = None
        self.load()

    def load(self) -> None:
        """Load the file; a bad file raises ``ValueError`` (at start-up that stops the gateway)."""
        stamp = self._file_stamp()
        records = tuple(KeyFile.read(self.path).keys)
        self._records = records
        self._by_digest = {r.digest: r for r in records}  # a digest listed twice: the last entry holds
        self._stamp = stamp

    def reload_if_changed(self) -> bool:
        stamp = self._file_stamp()
        if stamp == self._stamp:
            return False
        try:
            self.load()
        except ValueError as exc:
            # Keep serving with the keys we had rather than locking everybody out on a typo.
            log.warning("key file not reloaded, keeping %d keys: %s", len(self._records), exc)
            self._stamp = stamp
            return False
        log.info("key file reloaded: %d keys", len(self._records))
        return True

    async def watch(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            self.reload_if_changed()

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    @property
    def usable_count(self) -> int:
        now = self._now()
        return sum(1 for r in self._records if not r.revoked and not r.expired(now))

    def lookup(self, key: str) -> KeyRecord | None:
        """The record whose digest matches the presented key's.

        Looked up by digest in a dict, as services that keep only hashed tokens do: how long the lookup
        takes depends on the SHA-256 of what was presented, which an attacker can choose but cannot steer
        towards a stored digest, so its timing says nothing about any stored key. (A constant-time scan
        over every record, as before, cost O(keys) per request: 1.2 ms with 10,000 keys here.)
        """
        return self._by_digest.get(digest(key))

    def now(self) -> datetime:
        return self._now()
