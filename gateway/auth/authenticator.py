"""Turns a request's headers into a :class:`Principal`, or fails closed.

Credentials are read from ``Authorization: Bearer`` or ``x-api-key`` only, never from the URL. Every
failure raises; there is no path that turns a failed check into an empty or anonymous principal
(CVE-2026-59822). Anonymous access exists only when configured, and only for callers that present no
credential at all: a wrong credential is a 401 even then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from starlette.datastructures import Headers

from gateway.auth.keys import KEY_PREFIX, KeyStore
from gateway.auth.policy import build_principal
from gateway.auth.principal import Principal
from gateway.auth.settings import TierPolicy
from gateway.errors import AuthenticationFailed

if TYPE_CHECKING:  # PyJWT, cryptography and httpx are imported only when a JWT issuer is configured
    from gateway.auth.tokens import JWTVerifier

__all__ = ["Authenticator"]

_ANONYMOUS = Principal(name="anonymous", kind="anonymous")
_MAX_CREDENTIAL = 8192


class Authenticator:
    def __init__(
        self,
        *,
        keys: KeyStore | None,
        jwt: JWTVerifier | None,
        allow_anonymous: bool,
        tiers: Mapping[str, TierPolicy] | None = None,
        on_failure: Callable[[str], None] = lambda reason: None,
    ) -> None:
        self.tiers: Mapping[str, TierPolicy] = tiers or {}
        self.keys = keys
        self.jwt = jwt
        self.allow_anonymous = allow_anonymous
        self._on_failure = on_failure

    async def authenticate(self, headers: Headers) -> Principal:
        try:
            return await self._authenticate(headers)
        except AuthenticationFailed as exc:
            self._on_failure(exc.reason)
            raise

    async def _authenticate(self, headers: Headers) -> Principal:
        credential = _credential(headers)
        if credential is None:
            if self.allow_anonymous:
                return _ANONYMOUS
            raise AuthenticationFailed(
                "Missing credentials: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'.",
                reason="missing",
            )
        if len(credential) > _MAX_CREDENTIAL:
            raise AuthenticationFailed("Invalid credentials.", reason="malformed")
        if self.jwt is not None and not credential.startswith(KEY_PREFIX) and looks_like_jwt(credential):
            return await self.jwt.verify(credential)
        return self._api_key(credential)

    def _api_key(self, credential: str) -> Principal:
        if self.keys is None:
            raise AuthenticationFailed("Invalid credentials.", reason="invalid")
        record = self.keys.lookup(credential)
        if record is None:
            raise AuthenticationFailed("Invalid API key.", reason="invalid")
        if record.revoked:
            raise AuthenticationFailed("This API key has been revoked.", reason="revoked")
        if record.expired(self.keys.now()):
            raise AuthenticationFailed("This API key has expired.", reason="expired")
        return build_principal(
            record.name,
            "key",
            record.tier,
            self.tiers,
            models=record.models,
            backends=record.backends,
            route_override=record.route_override,
            speed_tier=record.speed_tier,
            limits=record.limits,
            thinking=record.thinking,
            thinking_override=record.thinking_override,
            strip_reasoning=record.strip_reasoning,
            pacing=record.pacing,
            route_threshold=record.route_threshold,
            admin=record.admin,
        )


def _credential(headers: Headers) -> str | None:
    authorization = headers.get("authorization")
    if authorization is not None:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise AuthenticationFailed(
                "Malformed Authorization header: expected 'Bearer <key>'.", reason="malformed"
            )
        return value.strip()
    api_key = headers.get("x-api-key")
    if api_key is not None:
        return api_key.strip() or None
    return None


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and token.startswith("eyJ")
