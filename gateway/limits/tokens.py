"""Token budgets (tokens per minute, the daily quota): reserved when a request is admitted, settled when
it has ended.

A budget counts tokens in buckets of its period: minutes read as a sliding window (the previous minute
weighted by the share of it the window still covers, like the ``limits`` library's sliding-window
counter), or UTC days read one at a time. Admission reserves what the request may spend at most (its
prompt's estimate plus ``max_tokens`` for every sequence it asks for) in every budget that applies, all
or none, in one step: one Lua script on Redis, one run without an ``await`` in memory. A reservation
larger than what is left is refused; the request is never shrunk to fit. Whatever the end (an answer, an
error, a fallback, a client gone, an exception), the reservation is then replaced by what the request
spent: what it did not use goes back to the bucket it was taken from (while that bucket lives), and what
it spent beyond it is added to the current bucket.

The bound. Checking and reserving are one atomic step, so a budget is exceeded only by what requests
spend beyond their reservations. A request with ``max_tokens`` cannot write more than its reservation's
completion part (the backend stops there), so its only error is its prompt's: the backend's count less
the gateway's estimate, when that is positive. Once the last request that fits is admitted no other is,
so a budget ends at most at its limit plus the estimation errors of the requests in flight at that
moment: each request overshoots by at most its own reservation's estimation error, however many run in
parallel. A request without ``max_tokens`` may also write beyond ``limits.default_max_tokens``, and that
counts in its error too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Budget", "MemoryTokens", "RedisTokens", "TokenGrant"]


@dataclass(frozen=True, slots=True)
class Budget:
    """One token budget of one principal."""

    name: str  # the limit's name in errors and metrics: "tokens" or "daily_tokens"
    stem: str  # the store key its buckets are named after
    limit: int
    period: int  # seconds per bucket
    sliding: bool  # whether the previous bucket still counts, in part

    def bucket(self, now: float) -> int:
        return int(now // self.period)

    def key(self, bucket: int) -> str:
        return f"{self.stem}:{bucket}"

    def covered_ms(self, now: float) -> int:
        """Milliseconds of the previous bucket that the window still covers (none for a fixed window).
        Integers, so that memory and the Lua script count alike to the token."""
        return self.period * 1000 - int(now % self.period * 1000) if self.sliding else 0

    def reset_after(self, now: float) -> float:
        return self.period - now % self.period

    @property
    def ttl_ms(self) -> int:
        # Kept through the next period too, where a sliding window still reads it as the previous bucket.
        return (2 * self.period + 60) * 1000


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """A reservation's answer and, when it was granted, what settling it needs."""

    budgets: tuple[Budget, ...]
    amount: int
    buckets: tuple[int, ...]  # the bucket each budget's reservation went into
    used: tuple[int, ...]  # each budget's count before the reservation, up to the one that refused
    refused: int | None  # the index of the budget without room; None: granted
    now: float

    def remaining(self, index: int) -> int:
        """What is left in a budget: after this reservation when it was granted, before it when not."""
        taken = self.amount if self.refused is None else 0
        return max(0, self.budgets[index].limit - self.used[index] - taken)


def _used(current: int, previous: int, covered_ms: int, period: int) -> int:
    """The tokens in a window: the current bucket and the share of the previous one it covers, rounded up."""
    return current + -(-previous * covered_ms // (period * 1000))


# KEYS: for each budget, its current bucket then its previous one. ARGV[1]: the amount; then for each
# budget its limit, the milliseconds of the previous bucket the window covers, the period (ms) and the
# buckets' lifetime (ms). Returns {refused, used...}: refused is 0 when every budget took the amount, else
# the (1-based) budget that had no room for it. Lua's numbers are doubles, exact for these integers.
_RESERVE = """
local amount = tonumber(ARGV[1])
local result = {0}
for i = 1, #KEYS / 2 do
  local current = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
  local previous = tonumber(redis.call('GET', KEYS[2 * i]) or '0')
  local used = current + math.ceil(previous * tonumber(ARGV[4 * i - 1]) / tonumber(ARGV[4 * i]))
  result[i + 1] = used
  if used + amount > tonumber(ARGV[4 * i - 2]) then
    result[1] = i
    return result
  end
end
for i = 1, #KEYS / 2 do
  redis.call('INCRBY', KEYS[2 * i - 1], amount)
  redis.call('PEXPIRE', KEYS[2 * i - 1], ARGV[4 * i + 1])
end
return result
"""
# KEYS: for each budget, the bucket its reservation went into, then the current bucket. ARGV[1]: what
# the request spent less what it reserved; then each budget's bucket lifetime (ms).
_SETTLE = """
local delta = tonumber(ARGV[1])
for i = 1, #KEYS / 2 do
  if delta < 0 then
    local held = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
    local back = math.min(-delta, held)
    if back > 0 then
      redis.call('DECRBY', KEYS[2 * i - 1], back)
    end
  else
    redis.call('INCRBY', KEYS[2 * i], delta)
    redis.call('PEXPIRE', KEYS[2 * i], ARGV[i + 1])
  end
end
return 0
"""


class MemoryTokens:
    """The budgets in this process's memory: each method runs to its end without an ``await``, so no
    other request's check can fall between a check and its reservation."""

    SWEEP_EVERY = 60.0  # seconds between two passes that drop expired buckets

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._counts: dict[str, tuple[int, float]] = {}  # key: (tokens, expires at)
        self._clock = clock
        self._next_sweep = 0.0

    def now(self) -> float:
        return self._clock()

    def _get(self, key: str, now: float) -> int:
        entry = self._counts.get(key)
        if entry is None or entry[1] <= now:
            return 0
        return entry[0]

    def _add(self, key: str, amount: int, now: float, ttl_ms: int) -> None:
        self._counts[key] = (self._get(key, now) + amount, now + ttl_ms / 1000)

    async def reserve(self, budgets: Sequence[Budget], amount: int, now: float) -> tuple[int, list[int]]:
        if now >= self._next_sweep:
            self._next_sweep = now + self.SWEEP_EVERY
            for key in [k for k, (_, expires) in self._counts.items() if expires <= now]:
                del self._counts[key]
        used: list[int] = []
        for index, budget in enumerate(budgets, 1):
            bucket = budget.bucket(now)
            count = _used(
                self._get(budget.key(bucket), now),
                self._get(budget.key(bucket - 1), now),
                budget.covered_ms(now),
                budget.period,
            )
            used.append(count)
            if count + amount > budget.limit:
                return index, used
        for budget in budgets:
            self._add(budget.key(budget.bucket(now)), amount, now, budget.ttl_ms)
        return 0, used

    async def settle(self, budgets: Sequence[Budget], buckets: Sequence[int], delta: int, now: float) -> None:
        for budget, reserved_in in zip(budgets, buckets, strict=True):
            if delta < 0:
                key = budget.key(reserved_in)
                held = self._get(key, now)
                if held > 0:
                    self._counts[key] = (held - min(-delta, held), self._counts[key][1])
            else:
                self._add(budget.key(budget.bucket(now)), delta, now, budget.ttl_ms)


class RedisTokens:
    """The budgets in Redis, shared by every worker and replica; one script call per reservation and one
    per settlement."""

    def __init__(self, pool: Any, clock: Callable[[], float] = time.time) -> None:
        import redis.asyncio as redis

        client: Any = redis.Redis(connection_pool=pool)
        self._reserve = client.register_script(_RESERVE)
        self._settle = client.register_script(_SETTLE)
        self._clock = clock

    def now(self) -> float:
        return self._clock()

    async def reserve(self, budgets: Sequence[Budget], amount: int, now: float) -> tuple[int, list[int]]:
        keys: list[str] = []
        args: list[Any] = [amount]
        for budget in budgets:
            bucket = budget.bucket(now)
            keys += [budget.key(bucket), budget.key(bucket - 1)]
            args += [budget.limit, budget.covered_ms(now), budget.period * 1000, budget.ttl_ms]
        result = await self._reserve(keys=keys, args=args)
        return int(result[0]), [int(used) for used in result[1:]]

    async def settle(self, budgets: Sequence[Budget], buckets: Sequence[int], delta: int, now: float) -> None:
        keys: list[str] = []
        for budget, reserved_in in zip(budgets, buckets, strict=True):
            keys += [budget.key(reserved_in), budget.key(budget.bucket(now))]
        await self._settle(keys=keys, args=[delta, *(budget.ttl_ms for budget in budgets)])
