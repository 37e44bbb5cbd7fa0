"""Full garbage collections on a clock while serving, not on allocation counts (gateway.server)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from gateway.server import YOUNG_COLLECTION_AFTER, collect_on_a_clock


def _watch(generations: list[int]) -> Any:
    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop":
            generations.append(info["generation"])  # nothing else: it runs inside the collector

    gc.callbacks.append(seen)
    return seen


async def test_allocations_start_young_collections_only_and_the_clock_starts_full_ones():
    before = gc.get_threshold()
    generations: list[int] = []
    seen = _watch(generations)
    try:
        with collect_on_a_clock(3600.0):
            # Young collections start later than CPython's default, above what a request keeps alive.
            assert gc.get_threshold()[:2] == (max(before[0], YOUNG_COLLECTION_AFTER), before[1])
        assert gc.get_threshold() == before
        # CPython's own young threshold here: the loop below then needs a few MB, not hundreds.
        with collect_on_a_clock(3600.0, young_after=before[0]):
            young, middle, _ = gc.get_threshold()
            assert (young, middle) == before[:2]
            # Objects that live on (as open connections' do) and cyclic garbage, for a dozen middle-
            # generation passes: under CPython's own thresholds that starts full ones (two, here).
            alive = []
            for _ in range(young * middle * 15):
                cycle: list[Any] = []
                cycle.append(cycle)
                alive.append([cycle])
            assert generations.count(1) > before[1] and 2 not in generations
            del alive
        assert gc.get_threshold() == before
        generations.clear()
        with collect_on_a_clock(0.05):
            for _ in range(200):  # the clock's pass, within ten seconds at most
                if 2 in generations:
                    break
                await asyncio.sleep(0.05)
            assert 2 in generations
        assert gc.get_threshold() == before
    finally:
        gc.callbacks.remove(seen)


async def test_a_worker_app_collects_on_the_clock_while_it_runs() -> None:
    """``gateway serve --workers``: uvicorn starts each worker's app without server.serve, so the app's
    own lifespan sets the clock (and restores the thresholds when it stops)."""
    from gateway.app import create_app
    from tests.support import gateway_settings

    # Nothing listens there: the health probes fail quietly, which this test does not look at.
    settings = gateway_settings(
        "http://127.0.0.1:9", "http://127.0.0.1:9", auth={"allow_anonymous": True}, usage={"enabled": False}
    )
    before = gc.get_threshold()
    for clock in (True, False):
        app = create_app(settings, gc_clock=clock)
        async with app.api.router.lifespan_context(app.api):
            changed = gc.get_threshold() != before
        assert changed is clock
        assert gc.get_threshold() == before
    gc.unfreeze()
