"""The shared state behind limits and backend load: rate windows, token budgets and concurrency leases.

Request rates use the ``limits`` library's moving window (exact: "100 per minute" lets exactly 100
through), on its memory storage or on Redis. Token budgets are reserved and settled by
``gateway.limits.tokens``, which says what bounds them. Concurrency slots are leases: sorted-set members
scored by their expiry and updated by one Lua script each (atomic on Redis), so a worker or replica that
dies without releasing its slots leaks them for ``lease_ttl`` seconds at most.

Every call is bounded by ``state.timeout``; any failure of the store is raised as
:class:`StoreUnavailable`, and the limiter applies the configured fail-open or fail-closed choice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

from gateway.errors import StoreUnavailable
from gateway.limits.tokens import Budget, MemoryTokens, RedisTokens, TokenGrant

__all__ = [
    "MemoryLeases",
    "PacedMemoryStorage",
    "RedisLeases",
    "StateStore",
    "StoreUnavailable",
    "TokenGrant",
    "Window",
    "build_store",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Window:
    limit: int
    remaining: int
    reset_after: float  # seconds until the window has room again


# Acquire a lease if fewer than ARGV[1] unexpired ones are held; returns {granted, count}.
_ACQUIRE = """
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local count = redis.call('ZCARD', KEYS[1])
if count < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[4])
  redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 2000))
  return {1, count + 1}
end
return {0, count}
"""
# Release one lease; returns the number still held.
_RELEASE = """
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]))
return redis.call('ZCARD', KEYS[1])
"""
# Extend a lease that is still held (XX: never re-creates one that expired); returns 1 when extended.
_RENEW = """
local now = tonumber(ARGV[1])
local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
if score and tonumber(score) > now then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 2000))
  return 1
end
return 0
"""
_COUNT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]))
return redis.call('ZCARD', KEYS[1])
"""


class MemoryLeases:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._leases: dict[str, dict[str, float]] = {}
        self._clock = clock

    def _live(self, key: str) -> dict[str, float]:
        now = self._clock()
        held = self._leases.setdefault(key, {})
        for lease_id in [k for k, expiry in held.items() if expiry <= now]:
            del held[lease_id]
        return held

    async def acquire(self, key: str, limit: int, ttl: float, lease_id: str) -> tuple[bool, int]:
        held = self._live(key)
        if len(held) >= limit:
            return False, len(held)
        held[lease_id] = self._clock() + ttl
        return True, len(held)

    async def release(self, key: str, lease_id: str) -> int:
        held = self._live(key)
        held.pop(lease_id, None)
        return len(held)

    async def renew(self, key: str, lease_id: str, ttl: float) -> bool:
        held = self._live(key)
        if lease_id not in held:
            return False
        held[lease_id] = self._clock() + ttl
        return True

    async def count(self, key: str) -> int:
        return len(self._live(key))

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


class RedisLeases:
    def __init__(self, pool: Any, clock: Callable[[], float] = time.time) -> None:
        import redis.asyncio as redis

        self._client: Any = redis.Redis(connection_pool=pool)
        self._acquire = self._client.register_script(_ACQUIRE)
        self._release = self._client.register_script(_RELEASE)
        self._renew = self._client.register_script(_RENEW)
        self._count = self._client.register_script(_COUNT)
        self._clock = clock

    async def acquire(self, key: str, limit: int, ttl: float, lease_id: str) -> tuple[bool, int]:
        granted, count = await self._acquire(keys=[key], args=[limit, ttl, self._clock(), lease_id])
        return bool(granted), int(count)

    async def release(self, key: str, lease_id: str) -> int:
        return int(await self._release(keys=[key], args=[self._clock(), lease_id]))

    async def renew(self, key: str, lease_id: str, ttl: float) -> bool:
        return bool(await self._renew(keys=[key], args=[self._clock(), ttl, lease_id]))

    async def count(self, key: str) -> int:
        return int(await self._count(keys=[key], args=[self._clock()]))

    async def ping(self) -> None:
        await self._client.ping()

    async def aclose(self) -> None:
        # The pool is the store's one pool (build_store): closing it closes the rate windows' connections too.
        await self._client.aclose(close_connection_pool=True)


class PacedMemoryStorage(MemoryStorage):
    """The ``limits`` library's memory storage with its expiry pass run once a second at most.

    The library schedules a pass after every hit whose previous pass has ended, which on an event loop that
    turns between requests is every hit, and the pass hops to a worker thread once per key
    (``asyncio.to_thread``): 65 µs of CPU per request with a requests-per-minute limit against 15 µs
    without. The windows' own reads
    skip entries that have expired, so the pass only frees memory; once a second is soon enough for that.
    """

    EVERY = 1.0  # seconds between two expiry passes, at most one each
    _due = 0.0

    # The library's private hook, by its mangled name (tests/test_limiter_units.py checks it still exists).
    async def _MemoryStorage__schedule_expiry(self) -> None:
        now = time.monotonic()
        if now >= self._due:
            self._due = now + self.EVERY
            await super()._MemoryStorage__schedule_expiry()  # type: ignore[misc]


class StateStore:
    """Rate windows and leases behind one bounded, failure-translating interface."""

    def __init__(
        self,
        storage: Storage,
        leases: MemoryLeases | RedisLeases,
        *,
        prefix: str,
        timeout: float,
        tokens: MemoryTokens | RedisTokens | None = None,
    ) -> None:
        self._moving = MovingWindowRateLimiter(storage)
        self._leases = leases
        self._tokens = tokens if tokens is not None else MemoryTokens()
        self._prefix = prefix
        self._timeout = timeout
        self.shared = isinstance(leases, RedisLeases)

    def key(self, *parts: str) -> str:
        return ":".join((self._prefix, *parts))

    async def _bounded(self, call: Awaitable[T]) -> T:
        try:
            if not self.shared:
                # This process's memory never waits on I/O: no timer to arm and cancel. asyncio.timeout
                # pushed a timer into the loop's heap (hundreds deep beside open connections) on every
                # limited request: 40 % of the limiter's time on a rejected one (py-spy).
                return await call
            async with asyncio.timeout(self._timeout):
                return await call
        except Exception as exc:  # a dead Redis raises many types (redis, limits, OSError): all the same here
            raise StoreUnavailable(type(exc).__name__) from exc

    # ---- rate windows -----------------------------------------------------------------------------------

    async def hit_requests(self, key: str, per_minute: int) -> tuple[bool, Window]:
        item = RateLimitItemPerMinute(per_minute)
        allowed = await self._bounded(self._moving.hit(item, key))
        return allowed, await self._window(self._moving, item, key)

    async def _window(self, limiter: Any, item: RateLimitItem, key: str) -> Window:
        stats = await self._bounded(limiter.get_window_stats(item, key))
        return Window(item.amount, max(0, stats.remaining), max(0.0, stats.reset_time - time.time()))

    # ---- token budgets ---------------------------------------------------------------------------------

    async def reserve_tokens(self, budgets: tuple[Budget, ...], amount: int) -> TokenGrant:
        """Take ``amount`` from every budget, or from none when one has no room for it."""
        now = self._tokens.now()
        refused, used = await self._bounded(self._tokens.reserve(budgets, amount, now))
        buckets = tuple(budget.bucket(now) for budget in budgets)
        return TokenGrant(budgets, amount, buckets, tuple(used), refused - 1 if refused else None, now)

    async def settle_tokens(self, grant: TokenGrant, spent: int) -> None:
        """Replace a granted reservation by what the request spent."""
        delta = spent - grant.amount
        if grant.refused is None and delta:
            now = self._tokens.now()
            await self._bounded(self._tokens.settle(grant.budgets, grant.buckets, delta, now))

    # ---- leases ----------------------------------------------------------------------------------------

    async def acquire(self, key: str, limit: int, ttl: float, lease_id: str) -> tuple[bool, int]:
        return await self._bounded(self._leases.acquire(key, limit, ttl, lease_id))

    async def release(self, key: str, lease_id: str) -> int:
        return await self._bounded(self._leases.release(key, lease_id))

    async def renew(self, key: str, lease_id: str, ttl: float) -> bool:
        return await self._bounded(self._leases.renew(key, lease_id, ttl))

    async def count(self, key: str) -> int:
        return await self._bounded(self._leases.count(key))

    async def ping(self) -> None:
        await self._bounded(self._leases.ping())

    async def aclose(self) -> None:
        await self._leases.aclose()


def build_store(
    redis_url: str | None, *, prefix: str, timeout: float, clock: Callable[[], float] = time.time
) -> StateStore:
    """The store on Redis at ``redis_url``, else in memory; ``clock`` times the leases and token budgets."""
    if redis_url is None:
        return StateStore(
            PacedMemoryStorage(),
            MemoryLeases(clock),
            prefix=prefix,
            timeout=timeout,
            tokens=MemoryTokens(clock),
        )
    import redis.asyncio as redis

    # One connection pool for the rate windows (the limits library's client) and the leases (ours), so
    # that closing the store closes every Redis connection it opened: the library has no close of its own.
    pool = redis.ConnectionPool.from_url(
        redis_url, socket_timeout=timeout, socket_connect_timeout=timeout, retry_on_timeout=False
    )
    storage = RedisStorage(
        redis_url.replace("redis://", "async+redis://", 1).replace("rediss://", "async+rediss://", 1),
        implementation="redispy",
        key_prefix=f"{prefix}:rl",
        connection_pool=pool,  # type: ignore[arg-type]  # documented; its **options annotation is narrower
    )
    leases, tokens = RedisLeases(pool, clock), RedisTokens(pool, clock)
    return StateStore(storage, leases, prefix=prefix, timeout=timeout, tokens=tokens)
