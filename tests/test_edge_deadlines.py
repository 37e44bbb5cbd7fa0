"""The edge's shared deadline timer (gateway/edge/deadlines.py) on a loop whose clock the test moves:
no sleeping, no wall time."""

from __future__ import annotations

from typing import Any

from gateway.edge.deadlines import Deadlines
from tests.support import FakeLoop

TICK = 0.1


class Conn:
    def __init__(self, name: str, log: list[tuple[str, float]], loop: FakeLoop) -> None:
        self.name, self.log, self.loop = name, log, loop
        self.again: tuple[Deadlines, float] | None = None  # arm again when expired (a pipelined wait)

    def deadline_passed(self) -> None:
        self.log.append((self.name, self.loop.now))
        if self.again is not None:
            deadlines, seconds = self.again
            self.again = None
            deadlines.arm(self, seconds)


def test_each_armed_connection_expires_once_within_a_tick_of_its_deadline() -> None:
    loop = FakeLoop()
    deadlines = Deadlines(loop, TICK)  # type: ignore[arg-type]
    log: list[tuple[str, float]] = []
    start = loop.now
    a, b, c, d = (Conn(name, log, loop) for name in "abcd")
    deadlines.arm(a, 1.0)
    deadlines.arm(b, 0.35)
    deadlines.arm(c, 2.0)
    deadlines.arm(d, 0.25)  # slots of both parities: a timer firing every other slot is caught
    loop.run_until(start + 0.24)
    assert log == []
    loop.run_until(start + 5.0)
    assert [name for name, _ in log] == ["d", "b", "a", "c"]
    for (_, at), seconds in zip(log, (0.25, 0.35, 1.0, 2.0), strict=True):
        assert start + seconds <= at <= start + seconds + TICK + 1e-9
    assert loop.timers == []  # nothing armed: no timer left running


def test_a_disarmed_connection_never_expires_and_rearming_moves_it() -> None:
    loop = FakeLoop()
    deadlines = Deadlines(loop, TICK)  # type: ignore[arg-type]
    log: list[tuple[str, float]] = []
    start = loop.now
    a, b = Conn("a", log, loop), Conn("b", log, loop)
    slot_a = deadlines.arm(a, 0.5)
    slot_b = deadlines.arm(b, 0.5)
    deadlines.disarm(a, slot_a)  # its request arrived in time
    deadlines.disarm(b, slot_b)
    deadlines.arm(b, 3.0)  # the next phase (the body) has a deadline of its own
    loop.run_until(start + 10.0)
    assert [name for name, _ in log] == ["b"]
    assert log[0][1] >= start + 3.0


def test_a_connection_armed_again_when_expired_expires_again_later() -> None:
    loop = FakeLoop()
    deadlines = Deadlines(loop, TICK)  # type: ignore[arg-type]
    log: list[tuple[str, float]] = []
    start = loop.now
    a = Conn("a", log, loop)
    a.again = (deadlines, 1.0)
    deadlines.arm(a, 0.5)
    loop.run_until(start + 10.0)
    assert [name for name, _ in log] == ["a", "a"]
    assert log[1][1] - log[0][1] >= 1.0


class CountingDict(dict[int, Any]):
    pops = 0

    def pop(self, *args: Any) -> Any:
        self.pops += 1
        return super().pop(*args)


def test_arming_after_an_idle_hour_does_not_walk_the_hour() -> None:
    loop = FakeLoop()
    deadlines = Deadlines(loop, TICK)  # type: ignore[arg-type]
    log: list[tuple[str, float]] = []
    deadlines.arm(Conn("a", log, loop), 0.2)
    loop.run_until(loop.now + 1.0)
    loop.now += 3600.0
    slots = CountingDict(deadlines._slots)
    deadlines._slots = slots
    start = loop.now
    deadlines.arm(Conn("b", log, loop), 0.2)
    loop.run_until(start + 1.0)
    assert [name for name, _ in log] == ["a", "b"]
    assert slots.pops <= 1.0 / TICK + 2  # the slots of the second after the arm, not of the hour


def test_a_deadline_already_due_when_armed_still_expires() -> None:
    loop = FakeLoop()
    deadlines = Deadlines(loop, TICK)  # type: ignore[arg-type]
    log: list[tuple[str, float]] = []
    deadlines.arm(Conn("a", log, loop), 0.3)
    loop.run_until(loop.now + 0.35)  # a's slot swept; the clock now inside the next slot
    armed = loop.now
    deadlines.arm(Conn("b", log, loop), 0.0)
    deadlines.arm(Conn("c", log, loop), -1.0)
    loop.run_until(loop.now + 1.0)
    assert sorted(name for name, _ in log) == ["a", "b", "c"]
    assert all(at <= armed + TICK + 1e-9 for name, at in log if name != "a")  # at the next slot's end
