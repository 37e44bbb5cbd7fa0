"""API keys and the authenticator (JWT has its own module)."""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime, timedelta

import pytest
import yaml
from starlette.datastructures import Headers

from gateway.auth.authenticator import Authenticator
from gateway.auth.keys import KEY_PREFIX, KeyFile, KeyStore, digest, generate_key
from gateway.errors import AuthenticationFailed
from tests.support import write_key


def headers(**items: str) -> Headers:
    return Headers({k.replace("_", "-"): v for k, v in items.items()})


def test_generated_keys_are_prefixed_and_random():
    a, b = generate_key(), generate_key()
    assert a.startswith(KEY_PREFIX) and b.startswith(KEY_PREFIX) and a != b
    assert len(a) >= len(KEY_PREFIX) + 43  # 32 bytes, url-safe base64


def test_key_file_holds_only_digests(tmp_path):
    path = tmp_path / "keys.yaml"
    key = write_key(path, "alice")
    text = path.read_text()
    assert key not in text and digest(key) in text
    assert oct(path.stat().st_mode & 0o777) == "0o600"


@pytest.fixture
def store(tmp_path):
    return KeyStore(tmp_path / "keys.yaml")


async def test_bearer_and_x_api_key(tmp_path):
    path = tmp_path / "keys.yaml"
    key = write_key(path, "alice", models=["auto"])
    auth = Authenticator(keys=KeyStore(path), jwt=None, allow_anonymous=False)
    principal = await auth.authenticate(headers(authorization=f"Bearer {key}"))
    assert principal.name == "alice" and principal.models == frozenset({"auto"})
    assert (await auth.authenticate(headers(x_api_key=key))).name == "alice"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ({}, "missing"),
        ({"authorization": "Basic dXNlcjpwYXNz"}, "malformed"),
        ({"authorization": "Bearer "}, "malformed"),
        ({"authorization": "Bearer ' OR '1'='1"}, "invalid"),
        ({"authorization": "Bearer gw-wrong"}, "invalid"),
        ({"authorization": "Bearer " + "x" * 10000}, "malformed"),
    ],
)
async def test_rejections_fail_closed_with_a_reason(tmp_path, header, reason):
    path = tmp_path / "keys.yaml"
    write_key(path, "alice")
    reasons: list[str] = []
    auth = Authenticator(keys=KeyStore(path), jwt=None, allow_anonymous=False, on_failure=reasons.append)
    with pytest.raises(AuthenticationFailed) as info:
        await auth.authenticate(Headers(header))
    assert info.value.reason == reason and reasons == [reason]
    assert info.value.status == 401
    for value in header.values():
        assert value.split(" ", 1)[-1] not in info.value.body().decode() or not value.split(" ", 1)[-1]


async def test_expired_and_revoked_keys(tmp_path):
    path = tmp_path / "keys.yaml"
    old = write_key(path, "old", expires=datetime.now(UTC) - timedelta(seconds=1))
    gone = write_key(path, "gone")
    keys = KeyFile.read(path)
    keys.keys = [k.model_copy(update={"revoked": True}) if k.name == "gone" else k for k in keys.keys]
    keys.write(path)
    auth = Authenticator(keys=KeyStore(path), jwt=None, allow_anonymous=False)
    for key, reason in ((old, "expired"), (gone, "revoked")):
        with pytest.raises(AuthenticationFailed) as info:
            await auth.authenticate(headers(authorization=f"Bearer {key}"))
        assert info.value.reason == reason


async def test_anonymous_only_without_credentials(tmp_path):
    path = tmp_path / "keys.yaml"
    write_key(path, "alice")
    auth = Authenticator(keys=KeyStore(path), jwt=None, allow_anonymous=True)
    assert (await auth.authenticate(headers())).kind == "anonymous"
    # A wrong credential is never downgraded to anonymous (CVE-2026-59822).
    with pytest.raises(AuthenticationFailed):
        await auth.authenticate(headers(authorization="Bearer gw-wrong"))


def test_key_file_reload_on_change(tmp_path):
    path = tmp_path / "keys.yaml"
    write_key(path, "alice")
    store = KeyStore(path)
    assert not store.reload_if_changed()
    key = write_key(path, "bob")
    assert store.reload_if_changed()
    record = store.lookup(key)
    assert record is not None and record.name == "bob"


def test_broken_key_file_keeps_the_old_keys(tmp_path, caplog):
    path = tmp_path / "keys.yaml"
    key = write_key(path, "alice")
    store = KeyStore(path)
    path.write_text("keys: [{name: 7}]")
    os.utime(path, ns=(1, 1))
    with caplog.at_level(logging.WARNING, logger="gateway"):
        assert not store.reload_if_changed()
    # The change was seen and read, and refused: not merely unnoticed.
    assert "key file not reloaded, keeping 1 keys" in caplog.text
    assert store.lookup(key) is not None


def test_lookup_is_by_digest_only(store, tmp_path):
    path = tmp_path / "keys.yaml"
    key = write_key(path, "alice")
    store.load()
    assert store.lookup(key) is not None
    assert store.lookup(digest(key)) is None  # the digest itself is not a credential


def test_a_key_listed_twice_is_its_last_entry_and_a_revocation_applies_on_reload(tmp_path):
    path = tmp_path / "keys.yaml"
    key = generate_key()
    entry = {"digest": digest(key), "created": "2026-01-01T00:00:00Z"}
    path.write_text(yaml.safe_dump({"keys": [{"name": "old", **entry}, {"name": "new", **entry}]}))
    store = KeyStore(path)
    found = store.lookup(key)
    assert found is not None and found.name == "new"
    path.write_text(yaml.safe_dump({"keys": [{"name": "new", **entry, "revoked": True}]}))
    os.utime(path, ns=(2, 2))
    assert store.reload_if_changed()
    found = store.lookup(key)
    assert found is not None and found.revoked


def test_tiers_apply_unless_the_key_says_otherwise(tmp_path):
    from gateway.auth.policy import build_principal
    from gateway.auth.settings import TierPolicy
    from gateway.errors import PermissionDenied

    tiers = {
        "bots": TierPolicy(
            backends=["diffusion"], route_override=False, speed_tier="fast", route_threshold=0.8
        )
    }
    p = build_principal("bot", "key", "bots", tiers)
    assert p.backends == frozenset({"diffusion"}) and not p.may_override and p.speed_tier == "fast"
    assert p.route_threshold == 0.8  # the tier's difficulty threshold (routing.scorer)
    own = build_principal(
        "bot", "key", "bots", tiers, backends=["autoregressive"], route_override=True, route_threshold=0.3
    )
    assert own.backends == frozenset({"autoregressive"}) and own.may_override and own.tier == "bots"
    assert own.route_threshold == 0.3  # the key's own wins
    assert build_principal("x", "key", None, tiers).backends is None
    with pytest.raises(PermissionDenied):  # a tier that no longer exists fails closed
        build_principal("x", "key", "gone", tiers)


async def test_key_records_name_their_tier(tmp_path):
    from gateway.auth.settings import TierPolicy

    path = tmp_path / "keys.yaml"
    key = write_key(path, "bot", tier="bots")
    auth = Authenticator(
        keys=KeyStore(path), jwt=None, allow_anonymous=False, tiers={"bots": TierPolicy(models=["auto"])}
    )
    principal = await auth.authenticate(headers(authorization=f"Bearer {key}"))
    assert principal.tier == "bots" and principal.models == frozenset({"auto"})


async def test_a_key_record_carries_every_setting_it_names(tmp_path):
    from gateway.limits.settings import LimitSettings

    path = tmp_path / "keys.yaml"
    key = write_key(
        path,
        "bot",
        models=["auto"],
        backends=["diffusion"],
        route_override=False,
        speed_tier="fast",
        limits={"requests_per_minute": 7},
        thinking=True,
        thinking_override=False,
        strip_reasoning=True,
        pacing=False,
        route_threshold=0.3,
        admin=True,
    )
    auth = Authenticator(keys=KeyStore(path), jwt=None, allow_anonymous=False)
    p = await auth.authenticate(headers(authorization=f"Bearer {key}"))
    assert (p.name, p.kind, p.models, p.backends) == ("bot", "key", {"auto"}, {"diffusion"})
    assert (p.may_override, p.speed_tier, p.thinking, p.thinking_override) == (False, "fast", True, False)
    assert (p.strip_reasoning, p.pacing, p.route_threshold, p.admin) == (True, False, 0.3, True)
    assert p.limits == LimitSettings(requests_per_minute=7)


def test_a_key_expires_at_its_expiry_instant(tmp_path):
    from gateway.auth.keys import KeyRecord

    at = datetime(2030, 1, 1, tzinfo=UTC)
    record = KeyRecord(name="k", digest="0" * 64, created=at - timedelta(days=1), expires=at)
    assert not record.expired(at - timedelta(microseconds=1))
    assert record.expired(at)
    assert not record.model_copy(update={"expires": None}).expired(at)


def test_principal_permissions():
    from gateway.auth.principal import Principal

    catalog = [("diffusion", "dg"), ("autoregressive", "g4")]
    open_ = Principal(name="a", kind="key").access(catalog)
    assert open_.auto and open_.may_name("diffusion") and open_.may_name("autoregressive")
    closed = Principal(name="b", kind="key", models=frozenset({"auto"}), backends=frozenset({"diffusion"}))
    access = closed.access(catalog)
    # Automatic routing only, and only to diffusion: no backend may be named, not even diffusion.
    assert access.auto and access.serves("diffusion") and not access.serves("autoregressive")
    assert not access.may_name("diffusion")


def test_a_tier_fills_in_what_its_key_leaves_unset_and_the_key_wins_where_it_sets():
    from gateway.auth.policy import build_principal
    from gateway.auth.settings import TierPolicy
    from gateway.limits.settings import LimitSettings

    tier = TierPolicy(
        models=["auto"],
        backends=["diffusion"],
        route_override=False,
        speed_tier="fast",
        limits=LimitSettings(requests_per_minute=10),
        thinking=True,
        thinking_override=False,
        strip_reasoning=True,
        pacing=True,
        route_threshold=0.3,
        admin=True,
    )
    p = build_principal("bot", "jwt", "t", {"t": tier})
    assert (p.name, p.kind, p.tier, p.models, p.backends) == ("bot", "jwt", "t", {"auto"}, {"diffusion"})
    assert (p.may_override, p.speed_tier, p.thinking, p.thinking_override) == (False, "fast", True, False)
    assert (p.strip_reasoning, p.pacing, p.route_threshold, p.admin) == (True, True, 0.3, True)
    assert p.limits == LimitSettings(requests_per_minute=10)
    own = build_principal(
        "bot",
        "key",
        "t",
        {"t": tier},
        models=["g4"],
        backends=["autoregressive"],
        route_override=True,
        speed_tier="slow",
        limits=LimitSettings(tokens_per_minute=5),
        thinking=False,
        thinking_override=True,
        strip_reasoning=False,
        pacing=False,
        route_threshold=0.6,
        admin=False,
    )
    assert (own.models, own.backends, own.may_override, own.speed_tier) == (
        {"g4"},
        {"autoregressive"},
        True,
        "slow",
    )
    assert (own.thinking, own.thinking_override, own.strip_reasoning, own.pacing) == (
        False,
        True,
        False,
        False,
    )
    assert (own.route_threshold, own.admin) == (0.6, False)
    assert own.limits == LimitSettings(requests_per_minute=10).merged(LimitSettings(tokens_per_minute=5))
    assert own.limits is not None and (own.limits.requests_per_minute, own.limits.tokens_per_minute) == (
        10,
        5,
    )
