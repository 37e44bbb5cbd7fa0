"""The limiter's admissions in this process's memory store (issue 18: no shared mutable admission)."""

from __future__ import annotations

import dataclasses

import pytest

from gateway.auth.principal import Principal
from gateway.limits.limiter import UNLIMITED, Limiter
from gateway.limits.settings import LimitSettings, StateSettings
from gateway.limits.store import build_store


def _limiter() -> Limiter:
    return Limiter(LimitSettings(), StateSettings(), build_store(None, prefix="t", timeout=0.25))


async def test_requests_without_limits_share_one_admission_nobody_can_change():
    limiter = _limiter()
    first = await limiter.admit(Principal(name="a", kind="key"))
    second = await limiter.admit(Principal(name="b", kind="key", limits=LimitSettings()))
    assert first is UNLIMITED and second is UNLIMITED and first.headers == ()
    # What made a shared instance dangerous: one request's headers leaking into every other's.
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.headers = (("x-ratelimit-limit-requests", "1"),)  # type: ignore[misc]
    assert not hasattr(first.headers, "append")


async def test_a_limited_request_gets_its_own_headers():
    limiter = _limiter()
    principal = Principal(name="c", kind="key", limits=LimitSettings(requests_per_minute=5))
    admission = await limiter.admit(principal)
    assert admission is not UNLIMITED
    assert ("x-ratelimit-limit-requests", "5") in admission.headers
    assert ("x-ratelimit-remaining-requests", "4") in admission.headers
    assert UNLIMITED.headers == ()
