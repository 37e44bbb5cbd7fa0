"""The limiter's admissions in this process's memory store (no shared mutable admission), and
its token reservations in memory and on a real redis-server."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from limits.aio.storage import MemoryStorage

from gateway.auth.principal import Principal
from gateway.limits.limiter import UNLIMITED, Admission, Limiter, LimiterUnavailable, RateLimited
from gateway.limits.settings import LimitSettings, StateSettings
from gateway.limits.store import (
    MemoryLeases,
    PacedMemoryStorage,
    StateStore,
    StoreUnavailable,
    build_store,
)
from gateway.limits.tokens import Budget
from gateway.record import RequestRecord, Usage
from tests.redis_support import RedisServer


@dataclasses.dataclass(frozen=True)
class Cost:
    prompt: int = 10
    max_tokens: int | None = 40
    sequences: int = 1


COST = Cost()


def _limiter() -> Limiter:
    return Limiter(LimitSettings(), StateSettings(), build_store(None, prefix="t", timeout=0.25))


async def test_requests_without_limits_share_one_admission_nobody_can_change():
    limiter = _limiter()
    first = await limiter.admit(Principal(name="a", kind="key"), COST)
    second = await limiter.admit(Principal(name="b", kind="key", limits=LimitSettings()), COST)
    assert first is UNLIMITED and second is UNLIMITED and first.headers == ()
    # What made a shared instance dangerous: one request's headers leaking into every other's.
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.headers = (("x-ratelimit-limit-requests", "1"),)  # type: ignore[misc]
    assert not hasattr(first.headers, "append")


async def test_a_limited_request_gets_its_own_headers():
    limiter = _limiter()
    principal = Principal(name="c", kind="key", limits=LimitSettings(requests_per_minute=5))
    admission = await limiter.admit(principal, COST)
    assert admission is not UNLIMITED
    assert ("x-ratelimit-limit-requests", "5") in admission.headers
    assert ("x-ratelimit-remaining-requests", "4") in admission.headers
    assert UNLIMITED.headers == ()


@pytest.mark.parametrize(
    "field", ["requests_per_minute", "tokens_per_minute", "concurrent_requests", "daily_tokens"]
)
def test_any_limit_set_makes_the_settings_apply(field):
    # Read field by field: every field must count, as model_dump() did.
    assert LimitSettings(**{field: 3}).any
    assert not LimitSettings().any


async def test_concurrency_slots_are_leased_and_given_back():
    limiter = _limiter()
    principal = Principal(name="d", kind="key", limits=LimitSettings(concurrent_requests=2))
    first = await limiter.admit(principal, COST)
    second = await limiter.admit(principal, COST)
    with pytest.raises(RateLimited) as refused:
        await limiter.admit(principal, COST)
    assert refused.value.limit == "concurrency" and refused.value.headers["retry-after"] == "1"
    await first.finish(RequestRecord(request_id="r1", method="POST", path="/v1/chat/completions", started=0))
    third = await limiter.admit(principal, COST)  # the slot given back is free again; the lease ids differ
    await second.finish(RequestRecord(request_id="r2", method="POST", path="/v1/chat/completions", started=0))
    await third.finish(RequestRecord(request_id="r3", method="POST", path="/v1/chat/completions", started=0))
    assert await limiter._store.count(limiter._who(principal) + ":concurrent") == 0


async def test_a_memory_store_failure_is_still_a_store_failure():
    # The memory store runs without a timeout (it never waits on I/O), but a failure in it is
    # still reported as the store's, so the limiter's fail-open or fail-closed choice applies.
    class Broken(MemoryLeases):
        async def acquire(self, key: str, limit: int, ttl: float, lease_id: str) -> tuple[bool, int]:
            raise RuntimeError("broken")

    store = StateStore(MemoryStorage(), Broken(), prefix="t", timeout=0.25)
    with pytest.raises(StoreUnavailable):
        await store.acquire("k", 1, 30.0, "lease")
    closed = Limiter(LimitSettings(), StateSettings(on_unavailable="closed"), store)
    with pytest.raises(LimiterUnavailable):
        await closed.admit(Principal(name="e", kind="key", limits=LimitSettings(concurrent_requests=1)), COST)


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
            await limiter.admit(principal, COST)
        except RateLimited:
            refused += 1
        await asyncio.sleep(0)  # the loop turns between two requests, as it does serving them
    assert refused == 45  # the window still counts every hit
    assert passes == 1  # the library alone: one pass per hit, 50


# ---- token budgets: reserved at admission, settled at the end -------------------------------------------


class Clock:
    """A clock the test moves: budgets read minutes and days from it, never from the wall."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0  # a minute's start

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "redis"])
async def stores(request, tmp_path):
    """Makes limiters on one store timed by one clock: this process's memory, or a real redis-server,
    where each limiter has its own connections, as replicas do."""
    clock = Clock()
    clock.now += 10
    server = RedisServer(tmp_path).start() if request.param == "redis" else None
    made: list[StateStore] = []

    def make() -> Limiter:
        if server is not None or not made:
            url = server.url if server is not None else None
            made.append(build_store(url, prefix="t", timeout=2.0, clock=clock))
        return Limiter(LimitSettings(), StateSettings(), made[-1])

    make.clock = clock  # type: ignore[attr-defined]
    try:
        yield make
    finally:
        for store in made:
            await store.aclose()
        if server is not None:
            server.stop()


def _record(usage: Usage | None) -> RequestRecord:
    record = RequestRecord(request_id="r", method="POST", path="/v1/chat/completions", started=0)
    record.usage = usage
    return record


async def _left(limiter: Limiter, principal: Principal) -> int:
    """What the principal's daily budget has left, read by reserving nothing."""
    assert principal.limits is not None and principal.limits.daily_tokens is not None
    budget = Budget(
        "daily_tokens", limiter._who(principal) + ":day", principal.limits.daily_tokens, 86400, False
    )
    grant = await limiter._store.reserve_tokens((budget,), 0)
    return budget.limit - grant.used[0]


async def test_parallel_requests_reserve_and_never_spend_more_than_the_quota(stores):
    # Twenty requests at once, each asking up to 10 + 40 tokens, on a quota of 200: four fit, whichever
    # process admits them (two limiters on one store: two replicas on Redis). Each then spends two tokens
    # of prompt more than the estimate said: the quota is exceeded by those estimation errors, no more.
    principal = Principal(name="p", kind="key", limits=LimitSettings(daily_tokens=200))
    replicas = [stores(), stores()]
    results = await asyncio.gather(
        *(replicas[i % 2].admit(principal, COST) for i in range(20)), return_exceptions=True
    )
    admitted = [r for r in results if isinstance(r, Admission)]
    refused = [r for r in results if isinstance(r, RateLimited)]
    assert len(admitted) == 4 and len(refused) == 16
    assert {(e.code, e.type, e.limit) for e in refused} == {
        ("insufficient_quota", "insufficient_quota", "daily_tokens")
    }
    assert "may use up to 50 tokens" in str(refused[0])
    for admission in admitted:
        await admission.finish(_record(Usage(prompt_tokens=12, completion_tokens=40)))
    spent = 200 - await _left(replicas[0], principal)
    assert spent == 4 * 52 and spent <= 200 + 4 * (12 - COST.prompt)


async def test_a_reservation_larger_than_what_is_left_is_refused_and_takes_nothing(stores):
    principal = Principal(name="q", kind="key", limits=LimitSettings(daily_tokens=100))
    limiter = stores()
    first = await limiter.admit(principal, Cost(prompt=10, max_tokens=50))
    with pytest.raises(RateLimited) as refused:
        await limiter.admit(principal, Cost(prompt=10, max_tokens=40))  # 50 asked, 40 left
    assert refused.value.code == "insufficient_quota" and refused.value.status == 429
    assert "40 tokens left" in str(refused.value)
    second = await limiter.admit(principal, Cost(prompt=10, max_tokens=30))  # the refusal took nothing
    assert await _left(limiter, principal) == 0
    await first.finish(_record(Usage(prompt_tokens=8, completion_tokens=12)))
    await second.finish(_record(Usage(prompt_tokens=8, completion_tokens=30)))
    assert await _left(limiter, principal) == 100 - 20 - 38


@pytest.mark.parametrize(
    ("usage", "spent"),
    [(None, 0), (Usage(prompt_tokens=90, completion_tokens=3), 93)],
    ids=["error-or-exception-without-usage", "cut-short-charged-its-usage"],
)
async def test_the_unspent_reservation_goes_back_however_the_request_ended(stores, usage, spent):
    principal = Principal(name="r", kind="key", limits=LimitSettings(daily_tokens=1000))
    limiter = stores()
    admission = await limiter.admit(principal, Cost(prompt=100, max_tokens=400))
    assert await _left(limiter, principal) == 500
    await admission.finish(_record(usage))
    assert await _left(limiter, principal) == 1000 - spent


async def test_a_request_refused_a_concurrency_slot_gives_its_tokens_back(stores):
    principal = Principal(
        name="c", kind="key", limits=LimitSettings(daily_tokens=1000, concurrent_requests=1)
    )
    limiter = stores()
    running = await limiter.admit(principal, COST)
    with pytest.raises(RateLimited) as refused:
        await limiter.admit(principal, COST)
    assert refused.value.code == "concurrency_limit_exceeded"
    assert await _left(limiter, principal) == 1000 - 50  # the running request's reservation only
    await running.finish(_record(None))


async def test_tokens_per_minute_slide_and_settle_into_the_bucket_they_were_taken_from(stores):
    principal = Principal(name="m", kind="key", limits=LimitSettings(tokens_per_minute=100))
    limiter = stores()
    clock = stores.clock
    long_one = await limiter.admit(principal, Cost(prompt=10, max_tokens=50))  # 60, 10 s into a minute
    short = await limiter.admit(principal, Cost(prompt=10, max_tokens=20))
    assert dict(short.headers)["x-ratelimit-remaining-tokens"] == "10"
    await short.finish(_record(Usage(prompt_tokens=10, completion_tokens=10)))  # 10 back
    clock.now += 60  # as far into the next minute: the last one still weighs 50 s of 60
    await long_one.finish(_record(Usage(prompt_tokens=10, completion_tokens=30)))  # 20 back, to that minute
    # Counted: (60 + 30 - 10 - 20) x 5/6 = 50; 50 left.
    with pytest.raises(RateLimited) as refused:
        await limiter.admit(principal, Cost(prompt=1, max_tokens=50))
    assert refused.value.type == "tokens" and refused.value.code == "rate_limit_exceeded"
    assert refused.value.headers["x-ratelimit-remaining-tokens"] == "50"
    fits = await limiter.admit(principal, Cost(prompt=10, max_tokens=40))
    assert dict(fits.headers)["x-ratelimit-remaining-tokens"] == "0"
    # Spending more than reserved (70 of 50) adds the rest to the current minute, in full: 70 there.
    await fits.finish(_record(Usage(prompt_tokens=20, completion_tokens=50)))
    clock.now += 60  # a minute on: 70 x 5/6 = 58.3, counted as 59
    with pytest.raises(RateLimited) as too_large:
        await limiter.admit(principal, Cost(prompt=60, max_tokens=50))  # more than the limit itself
    assert "Request too large for tokens per minute" in str(too_large.value)
    assert too_large.value.headers["x-ratelimit-remaining-tokens"] == "41"


async def test_without_max_tokens_the_default_is_reserved_for_each_sequence(stores):
    principal = Principal(
        name="s", kind="key", limits=LimitSettings(daily_tokens=1000, default_max_tokens=300)
    )
    limiter = stores()
    with pytest.raises(RateLimited) as refused:
        await limiter.admit(principal, Cost(prompt=100, max_tokens=None, sequences=4))  # 100 + 4 x 300
    assert "up to 1300 tokens" in str(refused.value)
    admission = await limiter.admit(principal, Cost(prompt=100, max_tokens=None, sequences=3))
    assert await _left(limiter, principal) == 0
    await admission.finish(_record(None))
    assert await _left(limiter, principal) == 1000
