"""Full garbage collections on a clock while serving, not on allocation counts (gateway.server, issue 16)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from gateway.server import collect_on_a_clock


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
            assert gc.get_threshold()[:2] == before[:2]
            # Objects that live on (as open connections' do) and cyclic garbage, for a dozen middle-
            # generation passes: under CPython's own thresholds that starts full ones (two, here).
            alive = []
            for _ in range(before[0] * before[1] * 15):
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
