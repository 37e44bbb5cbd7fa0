"""Admission control per principal: requests per minute, tokens per minute, concurrent requests and a
daily token quota, in the shared state store.

The proxy admits a request once it has read its body and checked what the principal may use (so that a
key at its limit asking for a model it may not use gets 403, not 429): ``admit`` counts the request,
reserves the most it may spend in the token budgets (gateway/limits/tokens.py: reservation, settlement
and the bound on overshoot) and takes a concurrency slot. Routes that are not proxied count against the
request rate with ``admit_request``. A rejection is a 429 in OpenAI's envelope with ``Retry-After``;
every admitted response carries OpenAI's ``x-ratelimit-*`` headers for the limits that apply.
``Admission.finish`` runs when the request has ended (its last byte sent, or its error): it replaces the
reservation by the tokens spent (prompt + completion from usage, streams and estimates included) and
gives the concurrency slot back.

Limits hold across workers and replicas because the counters live in Redis (``state.redis_url``), not in
the process (docs/peers.md #3). When the store cannot be reached, ``state.on_unavailable`` decides:
"open" lets the request through unlimited, "closed" refuses it with 503; either way a metric and a log
line say so, and nothing waits longer than ``state.timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from gateway.errors import GatewayError
from gateway.limits.principal import Principal
from gateway.limits.settings import DEFAULT_RETRY_HINT_MAX_SECONDS, LimitSettings, StateSettings
from gateway.limits.store import StateStore, StoreUnavailable, TokenGrant, Window
from gateway.limits.tokens import Budget
from gateway.record import RequestRecord

__all__ = ["UNLIMITED", "Admission", "Cost", "Limiter", "RateLimited", "reset_header"]

log = logging.getLogger("gateway.limits")


class RateLimited(GatewayError):
    status = 429
    code = "rate_limit_exceeded"

    def __init__(self, message: str, *, type_: str, code: str, retry_after: float, limit: str) -> None:
        self.retry_after = max(1, math.ceil(retry_after))  # whole seconds, as Retry-After says them
        super().__init__(message, code=code, headers={"retry-after": str(self.retry_after)})
        self.type = type_
        self.limit = limit
        # False when no wait makes room (a request larger than the limit itself).
        self.retryable = True


class LimiterUnavailable(GatewayError):
    status = 503
    type = "server_error"
    code = "rate_limiter_unavailable"


def reset_header(seconds: float) -> str:
    """OpenAI's reset format: "20ms", "1.5s", "6m0s"."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    if seconds < 60:
        return f"{seconds:.3g}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest}s"


@dataclass(frozen=True, slots=True)
class Admission:
    """What admitting one request gave it: its ``x-ratelimit-*`` headers and what to run at its end.
    Immutable, so the one unlimited admission below can be handed to every request without limits."""

    headers: tuple[tuple[str, str], ...] = ()
    _finish: Callable[[RequestRecord], object] | None = None

    async def finish(self, record: RequestRecord) -> None:
        if self._finish is not None:
            result = self._finish(record)
            if asyncio.iscoroutine(result):
                await result


UNLIMITED = Admission()


class Cost(Protocol):
    """What a request may spend, as the proxy knows it before sending it (gateway.proxy.cost)."""

    @property
    def prompt(self) -> int: ...  # the gateway's estimate of the prompt's tokens

    @property
    def max_tokens(self) -> int | None: ...  # per sequence; None: the request sets no limit

    @property
    def sequences(self) -> int: ...  # sequences it asks for (choices times prompts)


class Limiter:
    def __init__(
        self,
        defaults: LimitSettings,
        state: StateSettings,
        store: StateStore,
        *,
        on_reject: Callable[[Principal, str], None] = lambda principal, limit: None,
        on_store_error: Callable[[str], None] = lambda op: None,
        retry_hint_max_seconds: float = DEFAULT_RETRY_HINT_MAX_SECONDS,
    ) -> None:
        self._defaults = defaults
        self._retry_hint_max = retry_hint_max_seconds
        self._state = state
        self._store = store
        self._on_reject = on_reject
        self._on_store_error = on_store_error
        self._last_warning = 0.0
        self._defaults_apply = defaults.any
        # Merged limits per distinct override (few: one per key or tier); computed once, not per request.
        self._merged: dict[LimitSettings, LimitSettings] = {}

    def limits_for(self, principal: Principal) -> LimitSettings:
        override = principal.limits
        if override is None:
            return self._defaults
        merged = self._merged.get(override)
        if merged is None:
            merged = self._merged[override] = self._defaults.merged(override)
        return merged

    async def admit(self, principal: Principal, cost: Cost) -> Admission:
        """Admit a proxied request: count it, reserve its tokens, take a concurrency slot."""
        if principal.limits is None and not self._defaults_apply:
            return UNLIMITED  # the common case without limits: no work on the hot path
        limits = self.limits_for(principal)
        if not limits.any:
            return UNLIMITED
        try:
            return await self._admit(principal, limits, self._who(principal), cost)
        except StoreUnavailable as exc:
            return self._store_failed(exc)
        except RateLimited as exc:
            self._advise(exc)
            raise

    async def admit_request(self, principal: Principal) -> Admission:
        """Count a request to a route that is not proxied (the model list, the dry run, usage) against
        the principal's request rate: only that limit applies, and nothing is left to finish."""
        if principal.limits is None and not self._defaults_apply:
            return UNLIMITED
        limits = self.limits_for(principal)
        if limits.requests_per_minute is None:
            return UNLIMITED
        try:
            headers = await self._count(principal, limits, self._who(principal))
        except StoreUnavailable as exc:
            return self._store_failed(exc)
        except RateLimited as exc:
            self._advise(exc)
            raise
        return Admission(headers=tuple(headers))

    def _advise(self, error: RateLimited) -> None:
        """``x-should-retry``, which OpenAI's and Anthropic's SDKs obey over their own retry rules: a wait
        up to ``limits.retry_hint_max_seconds`` is theirs to sit out, a longer one the application's to
        decide (LimitsSection)."""
        retry = error.retryable and error.retry_after <= self._retry_hint_max
        error.headers["x-should-retry"] = "true" if retry else "false"

    def _store_failed(self, exc: StoreUnavailable) -> Admission:
        self._unavailable("admit", exc)
        if self._state.on_unavailable == "closed":
            raise LimiterUnavailable(
                "Rate limiting is unavailable, so the gateway is refusing requests; retry shortly."
            ) from None
        return UNLIMITED

    def _who(self, principal: Principal) -> str:
        # Store keys, not metric labels: a JWT subject is fine here (it is not a secret, and Redis keys
        # expire with their windows).
        return self._store.key("p", principal.kind, principal.name)

    async def _count(self, principal: Principal, limits: LimitSettings, who: str) -> list[tuple[str, str]]:
        """One hit on the request rate, when the principal has one; its headers."""
        if limits.requests_per_minute is None:
            return []
        allowed, window = await self._store.hit_requests(f"{who}:rpm", limits.requests_per_minute)
        headers = _headers("requests", window)
        if not allowed:
            self._reject(principal, "requests")
            raise _limited(
                f"Rate limit reached for requests per minute: limit {window.limit}. "
                f"Please try again in {reset_header(window.reset_after)}.",
                "requests",
                window,
                headers,
                "requests",
            )
        return headers

    async def _admit(self, principal: Principal, limits: LimitSettings, who: str, cost: Cost) -> Admission:
        store = self._store
        headers = await self._count(principal, limits, who)
        grant: TokenGrant | None = None
        budgets = _budgets(limits, who)
        if budgets:
            amount = cost.prompt + cost.sequences * (
                cost.max_tokens if cost.max_tokens is not None else limits.reserved_max_tokens
            )
            grant = await store.reserve_tokens(budgets, amount)
            if limits.tokens_per_minute is not None:  # the first budget
                headers += _headers("tokens", _token_window(grant, 0))
            if grant.refused is not None:
                raise self._refused(principal, grant, headers)
        lease: str | None = None
        renewal: asyncio.Task[None] | None = None
        concurrency_key = f"{who}:concurrent"
        if limits.concurrent_requests is not None:
            lease = os.urandom(16).hex()  # as unique as uuid4's hex, without building a UUID
            granted, _ = await store.acquire(
                concurrency_key, limits.concurrent_requests, self._state.lease_ttl, lease
            )
            if not granted:
                if grant is not None:  # the tokens go back: this request never runs
                    with contextlib.suppress(StoreUnavailable):
                        await store.settle_tokens(grant, 0)
                self._reject(principal, "concurrency")
                raise RateLimited(
                    f"Too many concurrent requests: limit {limits.concurrent_requests}.",
                    type_="requests",
                    code="concurrency_limit_exceeded",
                    retry_after=1,
                    limit="concurrency",
                )
            renewal = asyncio.create_task(self._renew(concurrency_key, lease))

        async def finish(record: RequestRecord) -> None:
            if renewal is not None:
                renewal.cancel()
            try:
                if grant is not None:
                    usage = record.usage
                    spent = usage.prompt_tokens + usage.completion_tokens if usage is not None else 0
                    await store.settle_tokens(grant, spent)
                if lease is not None:
                    await store.release(concurrency_key, lease)
            except StoreUnavailable as exc:
                # A slot frees itself when its lease expires; a reservation stays taken until its bucket
                # expires, and tokens spent beyond it are lost to the count.
                self._unavailable("finish", exc)

        return Admission(headers=tuple(headers), _finish=finish)

    def _refused(
        self, principal: Principal, grant: TokenGrant, headers: list[tuple[str, str]]
    ) -> RateLimited:
        assert grant.refused is not None
        budget = grant.budgets[grant.refused]
        window = _token_window(grant, grant.refused)
        self._reject(principal, budget.name)
        asked = (
            f"this request may use up to {grant.amount} tokens "
            "(its prompt's estimate and max_tokens for each sequence)"
        )
        if budget.name == "daily_tokens":
            error = _limited(
                f"Your daily token quota of {budget.limit} has {window.remaining} tokens left, and {asked}.",
                "insufficient_quota",
                window,
                headers,
                "daily_tokens",
            )
            error.code = "insufficient_quota"
            return error
        if grant.amount > budget.limit:  # no wait makes room for it: say what to change
            message = (
                f"Request too large for tokens per minute: limit {budget.limit}, and {asked}. "
                "Lower max_tokens or shorten the prompt."
            )
            error = _limited(message, "tokens", window, headers, "tokens")
            error.retryable = False
            return error
        message = (
            f"Rate limit reached for tokens per minute: limit {budget.limit}, {window.remaining} left, "
            f"and {asked}. Please try again in {reset_header(window.reset_after)}."
        )
        return _limited(message, "tokens", window, headers, "tokens")

    async def _renew(self, key: str, lease: str) -> None:
        """Keep a long request's slot: renew its lease well before it expires."""
        ttl = self._state.lease_ttl
        while True:
            await asyncio.sleep(ttl / 3)
            with contextlib.suppress(StoreUnavailable):
                await self._store.renew(key, lease, ttl)

    def _reject(self, principal: Principal, limit: str) -> None:
        self._on_reject(principal, limit)

    def _unavailable(self, op: str, exc: StoreUnavailable) -> None:
        self._on_store_error(op)
        now = time.monotonic()
        if now - self._last_warning > 10:  # one line per 10 s, not one per request
            self._last_warning = now
            log.warning(
                "state store unavailable (%s); failing %s",
                exc,
                self._state.on_unavailable,
                extra={"fields": {"op": op}},
            )


def _budgets(limits: LimitSettings, who: str) -> tuple[Budget, ...]:
    budgets: list[Budget] = []
    if limits.tokens_per_minute is not None:
        budgets.append(Budget("tokens", f"{who}:tpm", limits.tokens_per_minute, 60, sliding=True))
    if limits.daily_tokens is not None:
        budgets.append(Budget("daily_tokens", f"{who}:day", limits.daily_tokens, 86400, sliding=False))
    return tuple(budgets)


def _token_window(grant: TokenGrant, index: int) -> Window:
    budget = grant.budgets[index]
    return Window(budget.limit, grant.remaining(index), budget.reset_after(grant.now))


def _headers(kind: str, window: Window) -> list[tuple[str, str]]:
    return [
        (f"x-ratelimit-limit-{kind}", str(window.limit)),
        (f"x-ratelimit-remaining-{kind}", str(window.remaining)),
        (f"x-ratelimit-reset-{kind}", reset_header(window.reset_after)),
    ]


def _limited(
    message: str, type_: str, window: Window, headers: list[tuple[str, str]], limit: str
) -> RateLimited:
    error = RateLimited(
        message, type_=type_, code="rate_limit_exceeded", retry_after=window.reset_after, limit=limit
    )
    error.headers.update(dict(headers))
    return error
