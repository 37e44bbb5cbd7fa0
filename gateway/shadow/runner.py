"""Shadow evaluation off the request's path: a bounded queue of samples, and workers that ask the other
backend, have the judge compare the two answers, count the router's mistakes and store the sample.

``finish`` is the middleware's finisher: it runs once a response is complete (a stream's last byte sent),
and all a request pays there is a check of its record and, for a sample that still qualifies, a
non-blocking put. Past ``shadow.queue_size`` a sample is dropped and counted (``queue_full``). A worker
takes one sample at a time: room on the other backend (gateway/shadow/budget.py) or it is skipped, the
shadow request, the judge's two readings, the verdict.

A request routed to diffusion whose diffusion answer is judged worse is a **regret**; one routed to the
autoregressive backend whose diffusion answer is judged as good or better is a **missed saving**; either
way the request's score bucket is counted, and the sample stored with what the privacy switch allows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import orjson

from gateway.backends.state import BackendPool
from gateway.record import RequestRecord
from gateway.routing import extract_features
from gateway.routing.scorer.model import ScorerModel
from gateway.shadow.budget import Gate
from gateway.shadow.calls import Caller, CallFailed, Reply
from gateway.shadow.judge import Judge, Judgement
from gateway.shadow.metrics import ShadowMetrics
from gateway.shadow.sampling import Sample, ShadowSampler, bucket, unready
from gateway.shadow.settings import ShadowSettings
from gateway.shadow.store import SampleRow, SampleStore
from gateway.shadow.texts import kept_request, rendered, shadow_payload
from gateway.upstream import UpstreamClient
from gateway.upstream.settings import BackendSettings

__all__ = ["ShadowRunner", "outcome_of"]

log = logging.getLogger("gateway.shadow")

# How many of the features that pushed the score most a stored sample keeps.
_TOP_FEATURES = 5
_EXPIRE_EVERY = 3600.0


def outcome_of(sample: Sample, verdict: str) -> str:
    """regret, missed_saving or agreed: what a verdict on the diffusion answer says of the routing."""
    if sample.diffusion_routed:
        return "regret" if verdict == "diffusion_worse" else "agreed"
    return "missed_saving" if verdict in ("same", "diffusion_better") else "agreed"


@dataclass(slots=True)
class _Spent:
    shadow: Reply | None = None
    shadow_seconds: float = 0.0
    judgement: Judgement | None = None


class ShadowRunner:
    def __init__(
        self,
        settings: ShadowSettings,
        backends: Sequence[BackendSettings],
        pool: BackendPool,
        upstream: UpstreamClient,
        metrics: ShadowMetrics,
        *,
        scorer: ScorerModel | None = None,
        store: SampleStore | None = None,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        self.sampler = ShadowSampler(settings, backends, lambda why: metrics.skip("shadow", why), rng)
        self._scorer = scorer
        self._store = store
        caller = Caller(upstream)
        self._caller = caller
        own: dict[str, int] = {}  # shadow and judge requests in flight, by backend: both gates count them
        self._gate = Gate(pool, settings.max_load, settings.budget_tokens_per_minute, own=own)
        judge = settings.judge
        named = {b.name: b for b in backends}
        judging = (
            named[judge.backend] if judge.backend else next(b for b in backends if b.kind != "diffusion")
        )
        self.judge = Judge(
            caller, judging, Gate(pool, judge.max_load, judge.budget_tokens_per_minute, own=own), judge
        )
        self._queue: asyncio.Queue[Sample] = asyncio.Queue(settings.queue_size)
        self._tasks: list[asyncio.Task[None]] = []
        # One thread writes samples: a slow database holds the workers (and so the queue), never the loop.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shadow-store") if store else None

    # ---- the request side ----------------------------------------------------------------------------------

    def finish(self, record: RequestRecord, finished: float) -> None:
        """The middleware's finisher: a drawn request whose response is complete joins the queue."""
        sample: Sample | None = record.shadow
        if sample is None:
            return
        why = unready(record, sample)
        if why is not None:
            self.metrics.skip("shadow", why)
            return
        sample.request_id = record.request_id
        sample.principal = record.principal
        sample.principal_kind = record.principal_kind
        sample.tier = record.tier
        sample.answer = record.answer or ""
        usage = record.usage
        sample.prompt_tokens = usage.prompt_tokens if usage is not None else 0
        sample.answer_tokens = usage.completion_tokens if usage is not None else 0
        try:
            self._queue.put_nowait(sample)
        except asyncio.QueueFull:
            self.metrics.skip("shadow", "queue_full")

    # ---- life cycle ----------------------------------------------------------------------------------------

    def start(self) -> None:
        self.metrics.start()
        self._tasks = [asyncio.create_task(self._work()) for _ in range(self.settings.workers)]
        if self._store is not None:
            self._tasks.append(asyncio.create_task(self._expire()))

    async def drain(self) -> None:
        """Wait until every queued sample has been worked on (tests, and a clean shutdown's best effort)."""
        await self._queue.join()

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._writer is not None:
            # A write still running ends at the store's own timeouts; shutdown does not wait for it.
            self._writer.shutdown(wait=False, cancel_futures=True)
        if self._store is not None:
            self._store.dispose()

    async def _work(self) -> None:
        while True:
            sample = await self._queue.get()
            try:
                await self.run(sample)
            except Exception as exc:  # a sample never stops the worker
                log.error("shadow sample failed", exc_info=exc)
            finally:
                self._queue.task_done()

    async def _expire(self) -> None:
        assert self._store is not None
        loop = asyncio.get_running_loop()
        while True:
            try:
                removed = await loop.run_in_executor(
                    self._writer, self._store.expire, self.settings.retention_days
                )
            except Exception as exc:
                log.warning("shadow samples: retention clean-up failed (%s)", type(exc).__name__)
            else:
                if removed:
                    log.info("shadow samples: %d past %d days removed", removed, self.settings.retention_days)
            await asyncio.sleep(_EXPIRE_EVERY)

    # ---- one sample ----------------------------------------------------------------------------------------

    async def run(self, sample: Sample) -> SampleRow | None:
        """Shadow, judge, count and store one sample; the stored row, or None when it was skipped."""
        other = sample.other
        ticket, busy = self._gate.enter(other.name, sample.prompt_tokens + sample.limit)
        if ticket is None:
            self.metrics.skip("shadow", busy or "busy")
            return None
        spent = _Spent()
        try:
            payload = shadow_payload(sample.payload, sample.limit, other.kind == "diffusion")
            spent.shadow = await self._caller.ask(other, sample.endpoint, payload)
        except CallFailed as exc:
            spent.shadow_seconds = exc.seconds
            self.metrics.spent("shadow", other.name, 1, exc.seconds, 0)
            return await self._done(sample, spent, discarded="shadow_failed")
        finally:
            self._gate.leave(other.name)
        reply = spent.shadow
        ticket.settle(reply.tokens)
        spent.shadow_seconds = reply.seconds
        self.metrics.spent("shadow", other.name, 1, reply.seconds, reply.tokens)
        limit = sample.limit
        if reply.finish_reason == "length" or max(reply.completion_tokens, sample.answer_tokens) >= limit:
            return await self._done(sample, spent, discarded="truncated")
        diffusion, autoregressive = (
            (sample.answer, reply.text) if sample.diffusion_routed else (reply.text, sample.answer)
        )
        request = rendered(sample.payload, sample.endpoint, self.settings.max_content_chars)
        judgement = await self.judge.compare(request, diffusion, autoregressive)
        spent.judgement = judgement
        judge = self.judge.backend.name
        self.metrics.spent("judge", judge, judgement.asked, judgement.seconds, judgement.tokens)
        if judgement.skipped is not None:
            self.metrics.skip("judge", judgement.skipped)
        return await self._done(sample, spent, discarded=judgement.discarded)

    async def _done(self, sample: Sample, spent: _Spent, discarded: str | None) -> SampleRow:
        judgement = spent.judgement
        verdict = judgement.verdict if judgement is not None else None
        routed = sample.routed_to
        if discarded is not None:
            self.metrics.discarded.labels(discarded).inc()
            outcome = "discarded"
        elif verdict is None:
            outcome = "unjudged"
        else:
            outcome = outcome_of(sample, verdict)
            self.metrics.verdicts.labels(routed.name, routed.kind, verdict).inc()
            if outcome == "regret":
                self.metrics.regret.labels(bucket(sample.score), routed.name).inc()
            elif outcome == "missed_saving":
                self.metrics.missed_saving.labels(bucket(sample.score), routed.name).inc()
        row = self._row(sample, spent, outcome, verdict, discarded)
        if self._store is not None:
            try:
                await asyncio.get_running_loop().run_in_executor(self._writer, self._store.write, row)
            except Exception as exc:
                log.warning(
                    "shadow samples: writing to %s failed (%s)", self._store.where, type(exc).__name__
                )
        return row

    def _row(
        self, sample: Sample, spent: _Spent, outcome: str, verdict: str | None, discarded: str | None
    ) -> SampleRow:
        judgement, reply = spent.judgement, spent.shadow
        content = self.settings.store_content
        limit = self.settings.max_content_chars
        top = None
        if content and self._scorer is not None:
            difficulty = extract_features(
                sample.payload, sample.endpoint, self._scorer, explain=_TOP_FEATURES
            ).difficulty
            top = orjson.dumps([c.as_dict() for c in difficulty.top] if difficulty else []).decode()
        now = time.time()
        return SampleRow(
            ts=now,
            day=time.strftime("%Y-%m-%d", time.gmtime(now)),
            request_id=sample.request_id,
            principal=sample.principal,
            principal_kind=sample.principal_kind,
            tier=sample.tier,
            api=sample.endpoint,
            routed_to=sample.routed_to.name,
            routed_kind=sample.routed_to.kind,
            shadow_backend=sample.other.name,
            judge_backend=self.judge.backend.name if judgement is not None else None,
            score=sample.score,
            threshold=sample.threshold,
            bucket=bucket(sample.score),
            route=",".join(sample.reasons),
            outcome=outcome,
            verdict=verdict,
            discarded=discarded,
            shadow_seconds=spent.shadow_seconds,
            judge_seconds=judgement.seconds if judgement is not None else 0.0,
            shadow_tokens=reply.tokens if reply is not None else 0,
            judge_tokens=judgement.tokens if judgement is not None else 0,
            judge_reason=judgement.reason if content and judgement is not None else None,
            top_features=top,
            request=orjson.dumps(kept_request(sample.payload, sample.endpoint, limit)).decode()
            if content
            else None,
            routed_answer=sample.answer[:limit] if content else None,
            shadow_answer=reply.text[:limit] if content and reply is not None else None,
        )
