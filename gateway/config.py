"""Typed configuration, loaded once at start-up: the root that assembles every section.

Sources, highest precedence first:

1. keyword arguments (tests);
2. environment variables ``GATEWAY_<SECTION>__<KEY>`` (``GATEWAY_SERVER__PORT=9000``); a backend is
   addressed by its name: ``GATEWAY_BACKENDS__DIFFUSION__API_KEY=...`` sets ``api_key`` of the backend
   named ``diffusion`` (``-`` in a name is written ``_``);
3. the YAML file named by ``--config`` or ``GATEWAY_CONFIG``;
4. the defaults of each section.

Everything is validated here, so a bad file fails at start-up with a message naming the key, never later
on a request. Relative paths in the file are resolved against the file's own directory.

Each section lives next to the package it configures (``auth/settings.py``, ``upstream/settings.py`` for
``backends:``, ``routing/`` with the scorer's and the breakers' parts from ``routing/scorer/`` and
``backends/``, ``limits/``, ``telemetry/``, ``usage/``, ``edge/``, ``shadow/``), and those packages
never import this module. Two sections stay here: ``server:`` and ``pacing:`` configure the layers above
this one (the process and the proxy loop, which read the assembled :class:`Settings`), and a section of theirs
could not be imported from here without an import upward (pyproject.toml, ``[tool.importlinter]``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from gateway.auth.settings import AuthSettings
from gateway.edge.settings import EdgeSettings
from gateway.errors import ConfigError
from gateway.limits.settings import LimitsSection, StateSettings
from gateway.routing.settings import RoutingSettings
from gateway.shadow.settings import ShadowSettings
from gateway.telemetry.settings import TelemetrySettings
from gateway.upstream.settings import BackendSettings
from gateway.usage.settings import UsageSettings

__all__ = [
    "CONFIG_ENV_VAR",
    "NO_CONFIGURATION",
    "ConfigError",
    "PacingSettings",
    "ServerSettings",
    "Settings",
    "load_settings",
]

ENV_PREFIX = "GATEWAY_"
CONFIG_ENV_VAR = "GATEWAY_CONFIG"
NO_CONFIGURATION = f"no configuration given: pass --config or set {CONFIG_ENV_VAR}"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    # uvicorn has no body limit of its own (docs/security.md): requests above this get 413.
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    # Objects and arrays nested deeper than this in a request body get 400 (json_too_deep). At most 128:
    # the gateway writes the body back out, wrapped a few levels more in logs and traces, and orjson
    # writes no more than 255 levels.
    max_json_depth: int = Field(64, ge=8, le=128)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Bounds on what one request may ask a backend for (docs/security.md: bound n and max_tokens).
    max_n: int = Field(8, ge=1, le=128)
    max_output_tokens: int | None = Field(None, ge=1)
    # The HTTP client that talks to backends, behind gateway/upstream/: httptools, the lean default (a
    # third more throughput than aiohttp's client, which it replaced: docs/performance.md), or httpx, the
    # reference client, which the tests also use to put a transport of their own in front of the app.
    upstream_client: Literal["httptools", "httpx"] = "httptools"
    # The event loop. asyncio's own is the default, by the numbers (bench/run.py part 0b,
    # docs/performance.md): as fast as uvloop for the gateway, and fair under saturation, where uvloop
    # keeps a few requests waiting hundreds of ms at high concurrency, a bare server included.
    loop: Literal["asyncio", "uvloop"] = "asyncio"


class PacingSettings(_Section):
    """Stream pacing: a diffusion backend's whole-canvas chunks re-chunked into small deltas,
    sent evenly so that typing animations stay smooth. Off by default: streams keep their exact bytes."""

    # For principals whose key or tier does not decide; a request decides with x-gateway-pacing.
    enabled: bool = False
    # Seconds: the most the end of an answer is delayed (each canvas is spread over at most this).
    budget: float = Field(1.0, gt=0, le=30)
    # Seconds: the least time between two deltas (pieces per canvas are at most budget / interval).
    interval: float = Field(0.04, ge=0.005, le=1)
    # Seconds: the largest budget a request may ask for with x-gateway-pacing: <milliseconds>.
    max_budget: float = Field(5.0, gt=0, le=30)

    @model_validator(mode="after")
    def _ordered(self) -> PacingSettings:
        if self.budget > self.max_budget:
            raise ValueError("budget must not exceed max_budget")
        return self


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    # Per-load sources, set on a throwaway subclass by load_settings(); never on Settings itself.
    source_yaml_file: ClassVar[Path | None] = None
    source_environ: ClassVar[Mapping[str, str] | None] = None

    server: ServerSettings = ServerSettings()
    backends: list[BackendSettings] = Field(default_factory=list)
    auth: AuthSettings = AuthSettings()
    routing: RoutingSettings = RoutingSettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    pacing: PacingSettings = PacingSettings()
    limits: LimitsSection = LimitsSection()
    state: StateSettings = StateSettings()
    usage: UsageSettings = UsageSettings()
    edge: EdgeSettings = EdgeSettings()
    shadow: ShadowSettings = ShadowSettings()

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if not self.backends:
            raise ValueError("at least one backend is required under 'backends'")
        seen_names: set[str] = set()
        seen_models: set[str] = set()
        for backend in self.backends:
            if backend.name in seen_names:
                raise ValueError(f"backend name {backend.name!r} is used twice")
            if backend.model in seen_models:
                raise ValueError(f"backend model {backend.model!r} is served by two backends")
            if backend.name == "auto" or backend.model == "auto":
                raise ValueError("'auto' is reserved for the gateway's own routing")
            seen_names.add(backend.name)
            seen_models.add(backend.model)
        for name, tier in self.auth.tiers.items():
            for target in tier.backends or ():
                if target not in seen_names:
                    raise ValueError(f"auth.tiers.{name}.backends: no backend named {target!r}")
            if tier.speed_tier is not None and tier.speed_tier not in self.routing.speed_tiers:
                raise ValueError(f"auth.tiers.{name}.speed_tier: not in routing.speed_tiers")
        jwt = self.auth.jwt
        if jwt is not None and jwt.default_tier is not None and jwt.default_tier not in self.auth.tiers:
            raise ValueError(f"auth.jwt.default_tier: no tier named {jwt.default_tier!r} in auth.tiers")
        for rule in self.routing.rules:
            if rule.backend not in seen_names:
                raise ValueError(f"routing.rules.{rule.name}: no backend named {rule.backend!r}")
        for alias, target in self.routing.aliases.items():
            if target not in seen_names:
                raise ValueError(f"routing.aliases.{alias}: no backend named {target!r}")
            if alias in seen_names or alias in seen_models or alias == "auto":
                raise ValueError(f"routing.aliases.{alias}: the alias hides a backend name or model id")
        _check_shadow(self.shadow, self.backends, self.auth.tiers)
        if self.state.redis_url is not None:
            problem = redis_url_problem(self.state.redis_url.get_secret_value())
            if problem is not None:
                raise ValueError(f"state.redis_url: {problem}")
        return self

    def backend(self, name: str) -> BackendSettings:
        for backend in self.backends:
            if backend.name == name:
                return backend
        raise KeyError(name)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        yaml_file = cls.source_yaml_file
        environ = os.environ if cls.source_environ is None else cls.source_environ
        return (
            init_settings,
            _SectionEnvSource(settings_cls, environ),
            _YamlWithBackendEnvSource(settings_cls, yaml_file, environ),
        )


class _SectionEnvSource(EnvSettingsSource):
    """``GATEWAY_<SECTION>__<KEY>`` for the dict sections; backends are handled by the YAML source."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._environ.items() if not _is_backend_var(k)}

    def __call__(self) -> dict[str, Any]:
        data = super().__call__()
        data.pop("backends", None)
        return data


def _is_backend_var(key: str) -> bool:
    return key.upper().startswith(ENV_PREFIX + "BACKENDS")


class _YamlWithBackendEnvSource(PydanticBaseSettingsSource):
    def __init__(
        self, settings_cls: type[BaseSettings], path: Path | None, environ: Mapping[str, str]
    ) -> None:
        super().__init__(settings_cls)
        self._path = path
        self._environ = environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # Abstract in the base class; unused because __call__ returns the whole mapping at once.
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        data = _read_yaml(self._path) if self._path is not None else {}
        backends = data.get("backends")
        if isinstance(backends, list):
            _apply_backend_env(backends, self._environ)
        return data


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read configuration file {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"configuration file {path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"configuration file {path} must hold a mapping at the top level")
    base = path.parent.resolve()
    auth = data.get("auth")
    if isinstance(auth, dict):
        _resolve_path(auth, "keys_file", base)
        if isinstance(auth.get("jwt"), dict):
            _resolve_path(auth["jwt"], "public_key_file", base)
    usage = data.get("usage")
    if isinstance(usage, dict):
        url = usage.get("url")
        # sqlite:///relative.db is a path too (sqlite:////abs.db is absolute): relative to the file.
        if isinstance(url, str) and url.startswith("sqlite:///") and not url.startswith("sqlite:////"):
            usage["url"] = "sqlite:///" + str(base / url.removeprefix("sqlite:///"))
    return data


def _resolve_path(section: dict[str, Any], key: str, base: Path) -> None:
    value = section.get(key)
    if isinstance(value, str) and value and not Path(value).is_absolute():
        section[key] = str(base / value)


def _apply_backend_env(backends: list[Any], environ: Mapping[str, str]) -> None:
    """``GATEWAY_BACKENDS__<NAME>__<KEY>[__<SUBKEY>]`` overrides one key of the backend named NAME."""
    by_name = {str(b.get("name", "")).replace("-", "_").upper(): b for b in backends if isinstance(b, dict)}
    prefix = ENV_PREFIX + "BACKENDS__"
    for key, value in environ.items():
        if not key.upper().startswith(prefix):
            continue
        parts = key[len(prefix) :].split("__")
        if len(parts) < 2:
            raise ConfigError(f"{key}: expected {prefix}<NAME>__<KEY>")
        backend = by_name.get(parts[0].upper())
        if backend is None:
            raise ConfigError(f"{key}: no backend named {parts[0].lower()!r} in the configuration")
        target = backend
        for part in parts[1:-1]:
            target = target.setdefault(part.lower(), {})
            if not isinstance(target, dict):
                raise ConfigError(f"{key}: {part.lower()} is not a section")
        target[parts[-1].lower()] = value


def _check_shadow(shadow: ShadowSettings, backends: list[BackendSettings], tiers: Mapping[str, Any]) -> None:
    judge = shadow.judge.backend
    if judge is not None and judge not in {b.name for b in backends}:
        raise ValueError(f"shadow.judge.backend: no backend named {judge!r}")
    for tier in shadow.tiers:
        if tier not in tiers:
            raise ValueError(f"shadow.tiers.{tier}: no tier of that name in auth.tiers")
    kinds = {b.kind for b in backends}
    if shadow.active and not {"diffusion", "autoregressive"} <= kinds:
        raise ValueError("shadow: shadow evaluation needs a diffusion and an autoregressive backend")


_REDIS_FORM = "redis://[:PASSWORD@]HOST:PORT/DB or rediss://..."


def redis_url_problem(url: str) -> str | None:
    """What is wrong with a ``state.redis_url``, or None. Checked at load, because the Redis client and the
    limits library only read it when the app is built, and raised a traceback there. The words never
    repeat the URL: it may hold a password."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a bad port or IPv6 literal: the URL cannot be read
        return f"not a URL, or its port is not a number from 1 to 65535 ({_REDIS_FORM})"
    if parts.scheme not in ("redis", "rediss"):
        return f"the scheme must be redis or rediss ({_REDIS_FORM})"
    if not parts.hostname or not port:  # the limits library needs both written out
        return f"needs a host and a port ({_REDIS_FORM})"
    if parts.path not in ("", "/") and not parts.path[1:].isdigit():
        return f"the database must be a number ({_REDIS_FORM})"
    from redis.connection import parse_url  # the client's own reading, query options included

    try:
        parse_url(url)  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
    except ValueError:
        return f"the Redis client cannot read its options ({_REDIS_FORM})"
    return None


# A model-level check names its field at the start of its message ("state.redis_url: ..."): printed as
# that field's error, not as one of the top level.
_NAMED = re.compile(r"^[a-z_]+(?:\.[\w-]+)+: ")


def _format_errors(exc: ValidationError, data_backends: list[str]) -> str:
    lines = []
    for error in exc.errors():
        loc = list(error["loc"])
        if len(loc) >= 2 and loc[0] == "backends" and isinstance(loc[1], int):
            idx = loc[1]
            loc[1] = data_backends[idx] if idx < len(data_backends) else idx
        where = ".".join(str(p) for p in loc) or "(top level)"
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"  {message}" if not loc and _NAMED.match(message) else f"  {where}: {message}")
    return "invalid configuration:\n" + "\n".join(lines)


def load_settings(
    path: Path | str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Load and validate the configuration, or raise :class:`ConfigError` with a readable message."""
    env = os.environ if environ is None else environ
    if path is None and env.get(CONFIG_ENV_VAR):
        path = env[CONFIG_ENV_VAR]
    yaml_path = Path(path) if path is not None else None
    if yaml_path is None and not overrides:
        # Backends come from the file only, so without one the first complaint would be a missing backend,
        # which does not say what is missing.
        raise ConfigError(NO_CONFIGURATION)
    # A subclass carries the per-call sources, so the Settings class itself holds no state.
    bound: type[Settings] = type(
        "Settings", (Settings,), {"source_yaml_file": yaml_path, "source_environ": env}
    )
    try:
        return bound(**overrides)
    except ValidationError as exc:
        names: list[str] = []
        if yaml_path is not None:
            raw = _read_yaml(yaml_path).get("backends")
            if isinstance(raw, list):
                names = [str(b.get("name", i)) if isinstance(b, dict) else str(i) for i, b in enumerate(raw)]
        raise ConfigError(_format_errors(exc, names)) from None
