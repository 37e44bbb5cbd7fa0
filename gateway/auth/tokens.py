"""JWT verification (RFC 7519) with the hardening of RFC 8725, on PyJWT.

Trust model: the algorithms and the key come from configuration only. The token's header is read for
``kid`` and nothing else; ``jku``, ``x5u`` and an embedded ``jwk`` are never followed (RFC 8725 §3.10).
``exp``, ``iss``, ``aud`` and the principal claim are required, because PyJWT checks ``exp`` only when
it is present; ``exp``, ``nbf`` and ``iat`` must be JSON integers no more than a century ahead, because
PyJWT reads them through ``int()`` (a numeric string, 1e300 or a boolean would pass).

JWKS keys are fetched with the async client, cached, refetched on an unknown ``kid`` at most once per
``jwks_min_refetch_seconds`` (CVE-2026-48524), and kept while the identity provider is down. When no key
can be had because the IdP is unreachable the answer is 503, not 401: the caller did nothing wrong.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import jwt

from gateway.auth.policy import build_principal
from gateway.auth.principal import Principal
from gateway.auth.settings import JWTSettings, TierPolicy
from gateway.errors import AuthenticationFailed, ConfigError, IdentityProviderDown

__all__ = ["JWKSCache", "JWTVerifier"]

log = logging.getLogger("gateway.auth")

_INVALID = "Invalid bearer token."
_NUMERIC_DATES = ("exp", "nbf", "iat")
# The furthest ahead a numeric date may lie: a century (of Julian years), in seconds.
_MAX_AHEAD = 36_525 * 86_400


class JWKSCache:
    def __init__(
        self,
        url: str,
        client: httpx.AsyncClient,
        *,
        algorithms: list[str],
        cache_seconds: float,
        min_refetch_seconds: float,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = url
        self._client = client
        self._algorithms = set(algorithms)
        self._cache_seconds = cache_seconds
        self._min_refetch = min_refetch_seconds
        self._timeout = timeout
        self._clock = clock
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._last_attempt: float | None = None
        self._last_ok = False
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def refresh(self) -> bool:
        """Fetch the key set once; on any failure keep the keys we have. Returns success."""
        self._last_attempt = self._clock()
        self.fetches += 1
        try:
            response = await self._client.get(self._url, timeout=self._timeout)
            response.raise_for_status()
            keys = self._parse(response.json())
        except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
            self._last_ok = False
            log.warning("JWKS fetch failed (%s); %d cached keys kept", type(exc).__name__, len(self._keys))
            return False
        self._keys = keys
        self._fetched_at = self._clock()
        self._last_ok = True
        return True

    def _parse(self, data: Any) -> dict[str | None, jwt.PyJWK]:
        if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
            raise ValueError("JWKS document has no 'keys' list")
        keys: dict[str | None, jwt.PyJWK] = {}
        for entry in data["keys"]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            # A symmetric key in a public key set would let anyone who reads the set sign tokens.
            if entry.get("kty") == "oct":
                continue
            try:
                key = jwt.PyJWK(entry)
            except jwt.PyJWTError:
                continue
            if key.algorithm_name in self._algorithms:
                keys[entry.get("kid")] = key
        return keys

    def _may_refetch(self) -> bool:
        return self._last_attempt is None or self._clock() - self._last_attempt >= self._min_refetch

    async def _refresh_bounded(self) -> None:
        async with self._lock:
            # Whoever held the lock may just have fetched: coalesce instead of fetching again.
            if self._may_refetch():
                await self.refresh()

    async def key_for(self, kid: str | None) -> jwt.PyJWK:
        stale = self._fetched_at is None or self._clock() - self._fetched_at > self._cache_seconds
        if stale and self._may_refetch():
            await self._refresh_bounded()
        key = self._pick(kid)
        if key is None and self._may_refetch():
            await self._refresh_bounded()
            key = self._pick(kid)
        if key is not None:
            return key
        if not self._last_ok and not self._keys:
            raise IdentityProviderDown("The identity provider's signing keys are unavailable; retry later.")
        raise AuthenticationFailed(_INVALID, reason="unknown_kid")

    def _pick(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:
            # Without a kid, only an unambiguous key set can be used.
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)


_REASONS: list[tuple[type[jwt.PyJWTError], str]] = [
    (jwt.ExpiredSignatureError, "expired"),
    (jwt.ImmatureSignatureError, "not_yet_valid"),
    (jwt.InvalidAudienceError, "audience"),
    (jwt.InvalidIssuerError, "issuer"),
    (jwt.MissingRequiredClaimError, "missing_claim"),
    (jwt.InvalidSignatureError, "signature"),
    (jwt.InvalidAlgorithmError, "algorithm"),
    (jwt.DecodeError, "malformed"),
]


class JWTVerifier:
    def __init__(
        self,
        settings: JWTSettings,
        http: httpx.AsyncClient,
        *,
        tiers: Mapping[str, TierPolicy] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tiers: Mapping[str, TierPolicy] = tiers or {}
        self._settings = settings
        self._options: dict[str, Any] = {"require": ["exp", "iss", "aud", settings.principal_claim]}
        self._static_key: str | bytes | None = None
        self.jwks: JWKSCache | None = None
        if settings.secret is not None:
            self._static_key = settings.secret.get_secret_value()
        elif settings.public_key_file is not None:
            self._static_key = _read_public_key(settings.public_key_file)
        else:
            assert settings.jwks_url is not None
            self.jwks = JWKSCache(
                str(settings.jwks_url),
                http,
                algorithms=settings.algorithms,
                cache_seconds=settings.jwks_cache_seconds,
                min_refetch_seconds=settings.jwks_min_refetch_seconds,
                timeout=settings.jwks_timeout,
                clock=clock,
            )

    async def verify(self, token: str) -> Principal:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise AuthenticationFailed(_INVALID, reason="malformed") from None
        key: jwt.PyJWK | str | bytes
        if self.jwks is not None:
            kid = header.get("kid")
            if kid is not None and not isinstance(kid, str):
                raise AuthenticationFailed(_INVALID, reason="malformed")
            key = await self.jwks.key_for(kid)
        else:
            assert self._static_key is not None
            key = self._static_key
        s = self._settings
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=s.algorithms,
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway,
                options=self._options,  # type: ignore[arg-type]
            )
        except jwt.PyJWTError as exc:
            reason = next((r for cls, r in _REASONS if isinstance(exc, cls)), "invalid")
            raise AuthenticationFailed(_INVALID, reason=reason) from None
        _numeric_dates(claims, time.time())
        name = claims.get(s.principal_claim)
        if not isinstance(name, str) or not name or len(name) > 256:
            raise AuthenticationFailed(_INVALID, reason="missing_claim")
        tier = claims.get(s.tier_claim, s.default_tier)
        if tier is not None and not isinstance(tier, str):
            raise AuthenticationFailed(_INVALID, reason="malformed")
        return build_principal(name, "jwt", tier, self._tiers)


def _numeric_dates(claims: dict[str, Any], now: float) -> None:
    """``exp``, ``nbf`` and ``iat``, where present, as JSON integers at most a century ahead.

    PyJWT compares ``int(value)``: it takes the string "9999999999", a float such as 1e300 (an ``exp``
    that never comes) and a boolean. Its own checks have passed by now; this refuses what they let by."""
    for claim in _NUMERIC_DATES:
        value = claims.get(claim)
        if value is None:
            continue
        if type(value) is not int or value > now + _MAX_AHEAD:  # type(): a bool is an int subclass
            raise AuthenticationFailed(_INVALID, reason="invalid_claim")


def _read_public_key(path: Any) -> bytes:
    try:
        data: bytes = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"auth.jwt.public_key_file: cannot read {path}: {exc.strerror}") from None
    if b"PRIVATE KEY" in data:
        raise ConfigError("auth.jwt.public_key_file: holds a private key; give the gateway the public key")
    return data
