"""The limiter's admissions in this process's memory store (issue 18: no shared mutable admission)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from limits.aio.storage import MemoryStorage

from gateway.auth.principal import Principal
from gateway.limits.limiter import UNLIMITED, Limiter, LimiterUnavailable, RateLimited
from gateway.limits.settings import LimitSettings, StateSettings
from gateway.limits.store import (
    MemoryLeases,
    PacedMemoryStorage,
    StateStore,
    StoreUnavailable,
    build_store,
)
from gateway.record import RequestRecord


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


@pytest.mark.parametrize(
    "field", ["requests_per_minute", "tokens_per_minute", "concurrent_requests", "daily_tokens"]
)
def test_any_limit_set_makes_the_settings_apply(field):
    # Read field by field (issue 16): every field must count, as model_dump() did.
    assert LimitSettings(**{field: 3}).any
    assert not LimitSettings().any


async def test_concurrency_slots_are_leased_and_given_back():
    limiter = _limiter()
    principal = Principal(name="d", kind="key", limits=LimitSettings(concurrent_requests=2))
    first = await limiter.admit(principal)
    second = await limiter.admit(principal)
    with pytest.raises(RateLimited) as refused:
        await limiter.admit(principal)
    assert refused.value.limit == "concurrency" and refused.value.headers["retry-after"] == "1"
    await first.finish(RequestRecord(request_id="r1", method="POST", path="/v1/chat/completions", started=0))
    third = await limiter.admit(principal)  # the slot given back is free again; the lease ids differ
    await second.finish(RequestRecord(request_id="r2", method="POST", path="/v1/chat/completions", started=0))
    await third.finish(RequestRecord(request_id="r3", method="POST", path="/v1/chat/completions", started=0))
    assert await limiter._store.count(limiter._who(principal) + ":concurrent") == 0


async def test_a_memory_store_failure_is_still_a_store_failure():
    # The memory store runs without a timeout (it never waits on I/O, issue 16), but a failure in it is
    # still reported as the store's, so the limiter's fail-open or fail-closed choice applies.
    class Broken(MemoryLeases):
        async def acquire(self, key: str, limit: int, ttl: float, lease_id: str) -> tuple[bool, int]:
            raise RuntimeError("broken")

    store = StateStore(MemoryStorage(), Broken(), prefix="t", timeout=0.25)
    with pytest.raises(StoreUnavailable):
        await store.acquire("k", 1, 30.0, "lease")
    closed = Limiter(LimitSettings(), StateSettings(on_unavailable="closed"), store)
    with pytest.raises(LimiterUnavailable):
        await closed.admit(Principal(name="e", kind="key", limits=LimitSettings(concurrent_requests=1)))


async def test_the_memory_windows_expire_old_entries_once_a_second_not_on_every_hit(monkeypatch):
    # The library's private hook we pace must still exist, or the pacing would silently do nothing.
    assert hasattr(MemoryStorage, "_MemoryStorage__schedule_expiry")
    passes = 0
    library = MemoryStorage._MemoryStorage__schedule_expiry  # type: ignore[attr-defined]

    async def counted(self: MemoryStorage) -> None:
        nonlocal passes
        passes += 1
        await library(self)

    monkeypatch.setattr(MemoryStorage, "_MemoryStorage__schedule_expiry", counted)
    monkeypatch.setattr(PacedMemoryStorage, "EVERY", 3600.0)  # however slowly the test runs
    limiter = _limiter()
    principal = Principal(name="f", kind="key", limits=LimitSettings(requests_per_minute=5))
    refused = 0
    for _ in range(50):
        try:
            await limiter.admit(principal)
        except RateLimited:
            refused += 1
        await asyncio.sleep(0)  # the loop turns between two requests, as it does serving them
    assert refused == 45  # the window still counts every hit
    assert passes == 1  # the library alone: one pass per hit, 50
