"""JWT verification against the RFC 8725 checklist, with a real JWKS server on loopback."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt
import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.auth.settings import JWTSettings
from gateway.auth.tokens import JWKSCache, JWTVerifier
from gateway.errors import AuthenticationFailed, IdentityProviderDown
from tests.support import ServerThread

ISS, AUD = "https://idp.test", "gateway"


@dataclass
class IdP:
    key: rsa.RSAPrivateKey
    kid: str = "k1"
    up: bool = True
    fetches: int = 0
    extra_keys: list[dict[str, Any]] = field(default_factory=list)

    def jwks(self) -> dict[str, Any]:
        public = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}, *self.extra_keys]}

    def token(self, *, key: Any = None, alg: str = "RS256", kid: str | None = "k1", **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISS, "aud": AUD, "sub": "svc-bot", "exp": now + 300, "iat": now, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key or self.key, algorithm=alg, headers={"kid": kid} if kid else None)


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def idp(rsa_key) -> Iterator[tuple[IdP, str]]:
    state = IdP(rsa_key)

    async def jwks(request: Request) -> Response:
        state.fetches += 1
        if not state.up:
            return Response("down", status_code=503)
        return Response(orjson.dumps(state.jwks()), media_type="application/json")

    with ServerThread(Starlette(routes=[Route("/jwks", jwks)])) as server:
        yield state, server.url + "/jwks"


def settings(**kw: Any) -> JWTSettings:
    base: dict[str, Any] = {"issuer": ISS, "audience": AUD, "algorithms": ["RS256"], "leeway": 0}
    return JWTSettings(**{**base, **kw})


@pytest.fixture
async def verifier(idp) -> Any:
    _, url = idp
    async with httpx.AsyncClient() as client:
        yield JWTVerifier(settings(jwks_url=url, jwks_min_refetch_seconds=60), client)


async def test_valid_token(idp, verifier):
    state, _ = idp
    principal = await verifier.verify(state.token())
    assert principal.name == "svc-bot" and principal.kind == "jwt"


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(data)).rstrip(b"=").decode()


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda s: s.token(exp=int(time.time()) - 10), "expired"),
        (lambda s: s.token(exp=None), "missing_claim"),
        (lambda s: s.token(iss=None), "missing_claim"),
        (lambda s: s.token(aud=None), "missing_claim"),
        (lambda s: s.token(sub=None), "missing_claim"),
        (lambda s: s.token(iss="https://evil.test"), "issuer"),
        (lambda s: s.token(aud="someone-else"), "audience"),
        (lambda s: s.token(key=rsa.generate_private_key(public_exponent=65537, key_size=2048)), "signature"),
        (
            lambda s: (
                _b64({"alg": "none", "kid": "k1"})
                + "."
                + _b64({"iss": ISS, "aud": AUD, "sub": "x", "exp": 9999999999})
                + "."
            ),
            "algorithm",
        ),
        (lambda s: "eyJhbGciOi.garbage.x", "malformed"),
    ],
)
async def test_rejected_tokens(idp, verifier, make, reason):
    state, _ = idp
    with pytest.raises(AuthenticationFailed) as info:
        await verifier.verify(make(state))
    assert info.value.reason == reason


CENTURY = 36_525 * 86_400


@pytest.mark.parametrize(
    "claims",
    [
        {"exp": str(int(time.time()) + 300)},  # a numeric string: int() reads it
        {"exp": 1e300},  # int(1e300) is in the future for ever
        {"exp": float(int(time.time()) + 300)},  # a whole number, written with a fraction
        {"exp": int(time.time()) + CENTURY + 86_400},  # an integer more than a century ahead
        {"exp": 10**400},  # more than a century ahead, and past any float
        {"nbf": str(int(time.time()) - 10)},
        {"nbf": False},  # a boolean is no integer, though int(False) is 0
        {"iat": True},
        {"iat": time.time() - 10},
    ],
    ids=[
        "exp-string",
        "exp-1e300",
        "exp-float",
        "exp-beyond-a-century",
        "exp-huge",
        "nbf-string",
        "nbf-bool",
        "iat-bool",
        "iat-float",
    ],
)
async def test_numeric_dates_must_be_integers_within_a_century(idp, verifier, claims):
    state, _ = idp
    with pytest.raises(AuthenticationFailed) as info:
        await verifier.verify(state.token(**claims))
    assert info.value.reason == "invalid_claim" and info.value.message == "Invalid bearer token."


def test_a_gateway_answers_a_string_exp_with_a_generic_401_counted_by_reason(make_gateway, tmp_path):
    secret = "0123456789abcdef0123456789abcdef-numeric-dates"
    gw = make_gateway(
        auth={
            "keys_file": str(tmp_path / "keys.yaml"),
            "jwt": {"issuer": ISS, "audience": AUD, "algorithms": ["HS256"], "secret": secret},
        }
    )
    token = jwt.encode({"iss": ISS, "aud": AUD, "sub": "bot", "exp": "99999999999"}, secret, "HS256")
    r = httpx.post(
        gw.base_url + "/chat/completions",
        json={"model": "auto", "messages": [{"role": "user", "content": "hi"}]},
        headers={"authorization": f"Bearer {token}"},
    )
    assert r.status_code == 401 and r.json()["error"]["message"] == "Invalid bearer token."
    assert gw.metric("gateway_auth_failures_total", reason="invalid_claim") == 1
    # Integers, the furthest just within a century: accepted.
    now = int(time.time())
    claims = {
        "iss": ISS,
        "aud": AUD,
        "sub": "bot",
        "exp": now + CENTURY - 86_400,
        "nbf": now - 10,
        "iat": now,
    }
    r = httpx.post(
        gw.base_url + "/chat/completions",
        json={"model": "auto", "messages": [{"role": "user", "content": "hi"}]},
        headers={"authorization": f"Bearer {jwt.encode(claims, secret, 'HS256')}"},
    )
    assert r.status_code == 200


@pytest.mark.parametrize("source", ["jwks", "public_key_file"])
async def test_hs256_signed_with_the_public_key_is_refused(idp, verifier, tmp_path, source):
    # The classic key-confusion attack (RFC 8725 §2.1, CVE-2022-29217).
    state, _ = idp
    pem = state.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    if source == "public_key_file":
        (tmp_path / "pub.pem").write_bytes(pem)
        verifier = JWTVerifier(settings(public_key_file=tmp_path / "pub.pem"), httpx.AsyncClient())
    header = _b64({"alg": "HS256", "kid": "k1", "typ": "JWT"})
    payload = _b64({"iss": ISS, "aud": AUD, "sub": "mallory", "exp": int(time.time()) + 60})
    import hashlib
    import hmac

    signature = (
        base64.urlsafe_b64encode(hmac.new(pem, f"{header}.{payload}".encode(), hashlib.sha256).digest())
        .rstrip(b"=")
        .decode()
    )
    with pytest.raises(AuthenticationFailed) as info:
        await verifier.verify(f"{header}.{payload}.{signature}")
    # Refused for its algorithm, before any signature is computed with the public key as a secret.
    assert info.value.reason == "algorithm"


async def test_jku_and_embedded_jwk_are_ignored(verifier):
    attacker = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = jwt.algorithms.RSAAlgorithm.to_jwk(attacker.public_key(), as_dict=True)
    token = jwt.encode(
        {"iss": ISS, "aud": AUD, "sub": "mallory", "exp": int(time.time()) + 60},
        attacker,
        algorithm="RS256",
        headers={"kid": "k1", "jku": "http://127.0.0.1:1/evil", "jwk": jwk},
    )
    with pytest.raises(AuthenticationFailed) as info:
        await verifier.verify(token)
    assert info.value.reason == "signature"


async def test_unknown_kid_flood_refetches_a_bounded_number_of_times(idp, verifier):
    state, _url = idp
    await verifier.verify(state.token())
    fetches = state.fetches
    for i in range(50):
        with pytest.raises(AuthenticationFailed) as info:
            await verifier.verify(state.token(kid=f"random-{i}"))
        assert info.value.reason == "unknown_kid"
    assert state.fetches - fetches <= 1


async def test_key_rotation_is_picked_up_on_unknown_kid(idp):
    state, url = idp
    async with httpx.AsyncClient() as client:
        v = JWTVerifier(settings(jwks_url=url, jwks_min_refetch_seconds=0), client)
        await v.verify(state.token())
        state.kid = "k2"
        assert (await v.verify(state.token(kid="k2"))).name == "svc-bot"


async def test_cached_keys_are_used_while_the_idp_is_down(idp):
    state, url = idp
    now = [1000.0]
    async with httpx.AsyncClient() as client:
        v = JWTVerifier(settings(jwks_url=url, jwks_cache_seconds=60), client, clock=lambda: now[0])
        await v.verify(state.token())
        state.up = False
        now[0] += 3600  # the cache is stale now: a refetch is attempted, fails, and the cached key serves
        fetches = state.fetches
        assert (await v.verify(state.token())).name == "svc-bot"
        assert state.fetches == fetches + 1


async def test_idp_down_with_no_key_is_503_not_401(idp):
    state, url = idp
    state.up = False
    async with httpx.AsyncClient() as client:
        v = JWTVerifier(settings(jwks_url=url, jwks_min_refetch_seconds=0), client)
        with pytest.raises(IdentityProviderDown) as info:
            await v.verify(state.token())
    assert info.value.status == 503


async def test_symmetric_keys_in_a_jwks_are_ignored(idp):
    state, url = idp
    secret = "s" * 40
    state.extra_keys = [{"kty": "oct", "kid": "sym", "k": base64.urlsafe_b64encode(secret.encode()).decode()}]
    async with httpx.AsyncClient() as client:
        v = JWTVerifier(settings(jwks_url=url, algorithms=["RS256"]), client)
        with pytest.raises(AuthenticationFailed) as info:
            await v.verify(state.token(key=secret, alg="HS256", kid="sym"))
        assert info.value.reason == "unknown_kid"
        # The settings refuse HS* beside a JWKS, so the algorithm list alone already keeps the key out
        # above; the key set's own filter is checked with a cache that would take HS256 keys.
        cache = JWKSCache(
            url, client, algorithms=["RS256", "HS256"], cache_seconds=60, min_refetch_seconds=0, timeout=5
        )
        assert await cache.refresh()
        assert (await cache.key_for("k1")).algorithm_name == "RS256"
        with pytest.raises(AuthenticationFailed) as info:
            await cache.key_for("sym")
        assert info.value.reason == "unknown_kid"


async def test_shared_secret_and_public_key_file(tmp_path, rsa_key):
    secret = "0123456789abcdef0123456789abcdef-hs"
    async with httpx.AsyncClient() as client:
        v = JWTVerifier(settings(secret=secret, algorithms=["HS256"]), client)
        token = jwt.encode(
            {"iss": ISS, "aud": AUD, "sub": "a", "exp": int(time.time()) + 60}, secret, "HS256"
        )
        assert (await v.verify(token)).name == "a"

        pem = tmp_path / "pub.pem"
        pem.write_bytes(
            rsa_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        v = JWTVerifier(settings(public_key_file=pem, principal_claim="client_id"), client)
        token = jwt.encode(
            {"iss": ISS, "aud": AUD, "client_id": "ci", "exp": int(time.time()) + 60}, rsa_key, "RS256"
        )
        assert (await v.verify(token)).name == "ci"


def test_gateway_accepts_jwt_end_to_end(idp, make_gateway):
    state, url = idp
    gw = make_gateway(auth={"jwt": {"issuer": ISS, "audience": AUD, "jwks_url": url}})
    ok = httpx.get(gw.base_url + "/models", headers={"authorization": f"Bearer {state.token()}"})
    assert ok.status_code == 200
    state.up = False
    bad = httpx.get(gw.base_url + "/models", headers={"authorization": f"Bearer {state.token(aud='x')}"})
    assert bad.status_code == 401
    assert bad.json()["error"]["code"] == "invalid_api_key"


async def test_tier_claim_applies_the_tiers_policy(tmp_path):
    from gateway.auth.settings import TierPolicy
    from gateway.errors import PermissionDenied

    secret = "0123456789abcdef0123456789abcdef-hs"
    tiers = {"free": TierPolicy(backends=["diffusion"], route_override=False)}

    def token(**claims: Any) -> str:
        body = {"iss": ISS, "aud": AUD, "sub": "u1", "exp": int(time.time()) + 60, **claims}
        return jwt.encode(body, secret, "HS256")

    async with httpx.AsyncClient() as client:
        v = JWTVerifier(
            settings(secret=secret, algorithms=["HS256"], default_tier="free"), client, tiers=tiers
        )
        free = await v.verify(token())
        assert free.tier == "free" and free.backends == frozenset({"diffusion"}) and not free.may_override
        v = JWTVerifier(settings(secret=secret, algorithms=["HS256"]), client, tiers=tiers)
        assert (await v.verify(token())).backends is None
        assert (await v.verify(token(tier="free"))).tier == "free"
        with pytest.raises(PermissionDenied):
            await v.verify(token(tier="platinum"))
        with pytest.raises(AuthenticationFailed):
            await v.verify(token(tier=["free"]))


async def test_a_key_without_use_is_a_signing_key_and_other_uses_are_not(idp):
    state, url = idp
    public = jwt.algorithms.RSAAlgorithm.to_jwk(state.key.public_key(), as_dict=True)
    async with httpx.AsyncClient() as client:
        for use, accepted in ((None, True), ("sig", True), ("enc", False)):
            entry = {**public, "kid": "k1", "alg": "RS256", **({"use": use} if use else {})}
            state.jwks = lambda entry=entry: {"keys": [entry]}  # type: ignore[method-assign]
            v = JWTVerifier(settings(jwks_url=url), client)
            if accepted:
                assert (await v.verify(state.token())).name == "svc-bot"
            else:
                with pytest.raises(AuthenticationFailed) as info:
                    await v.verify(state.token())
                assert info.value.reason == "unknown_kid"


async def test_a_kid_that_is_not_a_string_is_malformed(verifier):
    # PyJWT will not write such a header, so it is written by hand; refused before any key is looked up.
    header = _b64({"alg": "RS256", "kid": 7, "typ": "JWT"})
    payload = _b64({"iss": ISS, "aud": AUD, "sub": "a", "exp": int(time.time()) + 60})
    with pytest.raises(AuthenticationFailed) as info:
        await verifier.verify(f"{header}.{payload}.c2ln")
    assert info.value.reason == "malformed"


async def test_a_known_kid_with_fresh_keys_fetches_nothing(idp):
    state, url = idp
    async with httpx.AsyncClient() as client:
        v = JWTVerifier(settings(jwks_url=url, jwks_min_refetch_seconds=0, jwks_cache_seconds=3600), client)
        for _ in range(3):
            await v.verify(state.token())
    assert state.fetches == 1


async def test_a_private_key_or_a_missing_file_is_refused_as_the_public_key(tmp_path, rsa_key):
    from gateway.config import ConfigError

    private = tmp_path / "key.pem"
    private.write_bytes(
        rsa_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    async with httpx.AsyncClient() as client:
        with pytest.raises(ConfigError, match="holds a private key"):
            JWTVerifier(settings(public_key_file=private), client)
        with pytest.raises(ConfigError, match="cannot read"):
            JWTVerifier(settings(public_key_file=tmp_path / "absent.pem"), client)


def test_a_gateway_without_a_jwt_issuer_never_imports_the_jwt_libraries(tmp_path):
    """PyJWT, cryptography and httpx (~13 MB of a worker's memory) are loaded only for JWT verification
    (or the httpx upstream client): a gateway on API keys, built and served, never imports them."""
    import subprocess
    import sys

    import yaml

    config = tmp_path / "gateway.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "backends": [{"name": "d", "kind": "diffusion", "url": "http://127.0.0.1:1", "model": "m"}],
                "auth": {"allow_anonymous": True},
                "usage": {"enabled": False},
            }
        )
    )
    probe = (
        "import sys, gateway.cli, gateway.commands.serve\n"
        "from gateway.app import create_app\n"
        "from gateway.config import load_settings\n"
        f"create_app(load_settings({str(config)!r}))\n"
        "print(sorted(m for m in ('jwt', 'cryptography', 'httpx') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
