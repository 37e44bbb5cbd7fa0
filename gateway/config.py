"""Typed configuration, loaded once at start-up.

Sources, highest precedence first:

1. keyword arguments (tests);
2. environment variables ``GATEWAY_<SECTION>__<KEY>`` (``GATEWAY_SERVER__PORT=9000``); a backend is
   addressed by its name: ``GATEWAY_BACKENDS__DIFFUSION__API_KEY=...`` sets ``api_key`` of the backend
   named ``diffusion`` (``-`` in a name is written ``_``);
3. the YAML file named by ``--config`` or ``GATEWAY_CONFIG``;
4. the defaults below.

Everything is validated here, so a bad file fails at start-up with a message naming the key, never later
on a request. Relative paths in the file are resolved against the file's own directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from gateway.edge.settings import EdgeSettings
from gateway.errors import ConfigError
from gateway.limits.settings import LimitSettings, StateSettings
from gateway.routing.settings import RoutingSettings
from gateway.telemetry.tracing_settings import TracingSettings
from gateway.usage.settings import UsageSettings

__all__ = [
    "AuthSettings",
    "BackendSettings",
    "ConfigError",
    "DiffusionSettings",
    "JWTSettings",
    "PacingSettings",
    "ServerSettings",
    "Settings",
    "TelemetrySettings",
    "TierPolicy",
    "TimeoutSettings",
    "load_settings",
]

ENV_PREFIX = "GATEWAY_"
CONFIG_ENV_VAR = "GATEWAY_CONFIG"

# HMAC and public-key algorithms must never be mixed for one key (RFC 8725 §3.1, CVE-2022-29217).
HMAC_ALGORITHMS = frozenset({"HS256", "HS384", "HS512"})
PUBLIC_KEY_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    # uvicorn has no body limit of its own (docs/security.md): requests above this get 413.
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Bounds on what one request may ask a backend for (docs/security.md: bound n and max_tokens).
    max_n: int = Field(8, ge=1, le=128)
    max_output_tokens: int | None = Field(None, ge=1)
    # The HTTP client that talks to backends, all behind gateway/upstream/. httptools is the lean default
    # (measured against the others: bench/run.py part 0); aiohttp and httpx are there to compare with.
    upstream_client: Literal["httptools", "aiohttp", "httpx"] = "httptools"
    # The event loop. asyncio's own is the default, by the numbers (bench/run.py part 0b, README
    # Performance): as fast as uvloop for the gateway on this machine, and fair under saturation, where
    # uvloop kept 1-2 % of requests waiting 100-700 ms at concurrency 64, a bare server included.
    loop: Literal["asyncio", "uvloop"] = "asyncio"


class TimeoutSettings(_Section):
    """Seconds. ``first_byte`` covers queueing plus prefill plus, on diffusion, a whole first canvas."""

    connect: float = Field(5.0, gt=0)
    first_byte: float = Field(120.0, gt=0)
    idle: float = Field(60.0, gt=0)
    total: float = Field(900.0, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> TimeoutSettings:
        if self.total < self.first_byte:
            raise ValueError("total must be at least first_byte")
        return self


class DiffusionSettings(_Section):
    """How the diffusion backend was served; the gateway labels every request it sends there with these.

    They are server-wide in vLLM (docs/backends.md): the sampler and its bound come from the checkpoint's
    generation config, the canvas and step cap from ``--diffusion-config``.
    """

    sampler: Literal["entropy_bound"] = "entropy_bound"
    entropy_bound: float = Field(0.1, gt=0, le=10)
    canvas_length: int = Field(256, ge=1, le=8192)
    max_denoising_steps: int = Field(48, ge=1, le=4096)


_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"


class BackendSettings(_Section):
    name: str = Field(pattern=_NAME_PATTERN)
    kind: Literal["diffusion", "autoregressive"]
    url: HttpUrl
    model: str = Field(min_length=1, max_length=256)
    api_key: SecretStr | None = None
    # What the backend was started with (--max-num-seqs); by kind when unset: DiffusionGemma is served
    # with 4 (docs/backends.md), vLLM's own default is 256.
    max_concurrency: int | None = Field(None, ge=1, le=100_000)
    diffusion: DiffusionSettings | None = None
    timeouts: TimeoutSettings = TimeoutSettings()
    # Seconds for a typical answer before any is observed (then a moving average of what is): the
    # spill-over decision compares it across backends. Default: the published H100 figures by kind.
    expected_latency: float | None = Field(None, gt=0)
    # The APIs it serves (vLLM 0.33 serves all four, docs/backends.md); requests for another API are routed
    # elsewhere or answered 404.
    endpoints: frozenset[Literal["chat", "completions", "responses", "messages"]] = Field(
        frozenset({"chat", "completions", "responses", "messages"}), min_length=1
    )

    @model_validator(mode="after")
    def _diffusion_section(self) -> BackendSettings:
        if self.kind == "diffusion" and self.diffusion is None:
            # Frozen model: the default is filled in through object.__setattr__ once, at validation.
            object.__setattr__(self, "diffusion", DiffusionSettings())
        if self.max_concurrency is None:
            object.__setattr__(self, "max_concurrency", 4 if self.kind == "diffusion" else 256)
        if self.kind == "autoregressive" and self.diffusion is not None:
            raise ValueError("a 'diffusion' section is only valid on a backend of kind 'diffusion'")
        return self

    @property
    def base_url(self) -> str:
        return str(self.url).rstrip("/")


class JWTSettings(_Section):
    issuer: str = Field(min_length=1)
    audience: str | list[str]
    algorithms: list[str] = Field(default_factory=lambda: ["RS256"], min_length=1)
    jwks_url: HttpUrl | None = None
    public_key_file: Path | None = None
    secret: SecretStr | None = None
    # The claim that names the principal; it is required in every token.
    principal_claim: str = Field("sub", min_length=1)
    # The claim naming the principal's tier (auth.tiers), and the tier of tokens without that claim.
    tier_claim: str = Field("tier", min_length=1)
    default_tier: str | None = None
    # Seconds, not minutes (docs/security.md).
    leeway: float = Field(5.0, ge=0, le=120)
    jwks_cache_seconds: float = Field(300.0, gt=0)
    # An unknown kid refetches the JWKS at most this often (CVE-2026-48524: no unbounded refetching).
    jwks_min_refetch_seconds: float = Field(30.0, ge=0)
    jwks_timeout: float = Field(5.0, gt=0)

    @field_validator("algorithms")
    @classmethod
    def _known_algorithms(cls, value: list[str]) -> list[str]:
        for alg in value:
            if alg not in HMAC_ALGORITHMS | PUBLIC_KEY_ALGORITHMS:
                raise ValueError(f"unsupported algorithm {alg!r} ('none' is never accepted)")
        return value

    @model_validator(mode="after")
    def _one_key_source(self) -> JWTSettings:
        sources = [s for s in ("jwks_url", "public_key_file", "secret") if getattr(self, s) is not None]
        if len(sources) != 1:
            raise ValueError("set exactly one of jwks_url, public_key_file or secret")
        algs = set(self.algorithms)
        if algs & HMAC_ALGORITHMS and algs & PUBLIC_KEY_ALGORITHMS:
            raise ValueError("HMAC (HS*) and public-key algorithms must not be mixed (RFC 8725 §3.1)")
        if self.secret is not None and not algs <= HMAC_ALGORITHMS:
            raise ValueError("a shared secret needs HS256, HS384 or HS512 algorithms")
        if self.secret is None and not algs <= PUBLIC_KEY_ALGORITHMS:
            raise ValueError("a public key or JWKS needs public-key algorithms (RS*, PS*, ES*, EdDSA)")
        if self.secret is not None and len(self.secret.get_secret_value()) < 32:
            raise ValueError("secret must be at least 32 characters (RFC 7518 §3.2)")
        return self


class TierPolicy(_Section):
    """What a class of principals may do; a key (``tier`` in its record) or a JWT (``tier_claim``) names
    one. Fields a key sets itself take precedence over its tier's."""

    models: list[str] | None = None  # model ids, backend names or "auto" it may ask for (None: any)
    backends: list[str] | None = None  # backends the router may send its requests to (None: any)
    route_override: bool = True  # may choose a backend itself (x-gateway-route, aliases)
    speed_tier: str | None = None  # a routing.speed_tiers entry applied to its diffusion requests
    limits: LimitSettings | None = None  # overrides the limits: section for its principals
    # Thinking: the default for chat_template_kwargs.enable_thinking (None: the server's default), whether a
    # request may choose otherwise, and whether reasoning text is stripped from answers.
    thinking: bool | None = None
    thinking_override: bool = True
    strip_reasoning: bool = False
    # Stream pacing for its diffusion streams (None: the pacing: section's default).
    pacing: bool | None = None
    # Its difficulty threshold (routing.scorer): e.g. 0.8 for a bot that wants speed, 0.3 for users who
    # want quality; None: routing.scorer.threshold, else the model's.
    route_threshold: float | None = Field(None, gt=0, lt=1)
    # The admin scope: reads every principal's usage (GET /v1/gateway/usage); others see their own.
    admin: bool = False


class AuthSettings(_Section):
    keys_file: Path | None = None
    jwt: JWTSettings | None = None
    allow_anonymous: bool = False
    # How often the key file is checked for changes (seconds); changes apply without a restart.
    reload_interval: float = Field(2.0, gt=0)
    tiers: dict[str, TierPolicy] = Field(default_factory=dict)


class TelemetrySettings(_Section):
    # Prompt and completion text in the request log: off unless an operator turns it on, and cut short.
    log_content: bool = False
    log_content_max_chars: int = Field(2000, ge=0)
    # Scrape each backend's /metrics (load and diffusion counters) every routing.health_interval seconds.
    scrape_backends: bool = True
    # Prompt and completion text on trace spans (issue 19): off unless an operator turns it on.
    capture_content: bool = False
    tracing: TracingSettings = TracingSettings()
    # GET /metrics on the main listener: a bearer token it requires (None: open), or not served there at
    # all (then only on the operator listener, edge.operator_port, which never asks for the token).
    metrics_token: SecretStr | None = None
    metrics_on_main: bool = True
    # How a key's principal is labelled in metrics: its name, a short hash of the name (names stay out
    # of the scrape), or only its tier.
    metrics_principal: Literal["name", "hash", "tier"] = "name"


class PacingSettings(_Section):
    """Stream pacing (issue 8): a diffusion backend's whole-canvas chunks re-chunked into small deltas,
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
    limits: LimitSettings = LimitSettings()
    state: StateSettings = StateSettings()
    usage: UsageSettings = UsageSettings()
    edge: EdgeSettings = EdgeSettings()

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


def _format_errors(exc: ValidationError, data_backends: list[str]) -> str:
    lines = []
    for error in exc.errors():
        loc = list(error["loc"])
        if len(loc) >= 2 and loc[0] == "backends" and isinstance(loc[1], int):
            idx = loc[1]
            loc[1] = data_backends[idx] if idx < len(data_backends) else idx
        where = ".".join(str(p) for p in loc) or "(top level)"
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"  {where}: {message}")
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
