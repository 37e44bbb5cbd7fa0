"""The ``auth:`` section: the key file, JWT validation and the tiers that keys and tokens name."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, SecretStr, field_validator, model_validator

from gateway.limits.settings import LimitSettings

__all__ = ["HMAC_ALGORITHMS", "PUBLIC_KEY_ALGORITHMS", "AuthSettings", "JWTSettings", "TierPolicy"]

# HMAC and public-key algorithms must never be mixed for one key (RFC 8725 §3.1, CVE-2022-29217).
HMAC_ALGORITHMS = frozenset({"HS256", "HS384", "HS512"})
PUBLIC_KEY_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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
