"""Circuit breaker and backend state, with a fake clock."""

from __future__ import annotations

from gateway.backends.breaker import CircuitBreaker
from gateway.backends.settings import BreakerSettings
from gateway.backends.state import BackendState
from gateway.upstream.settings import BackendSettings


def test_breaker_opens_then_lets_one_probe_through():
    now = [0.0]
    breaker = CircuitBreaker(BreakerSettings(failures=3, cooldown=10), clock=lambda: now[0])
    for _ in range(2):
        breaker.failure()
    assert breaker.state == "closed" and breaker.allow()
    breaker.failure()
    assert breaker.state == "open" and not breaker.allow() and not breaker.available()
    now[0] = 10.0
    assert breaker.state == "half_open" and breaker.available()
    assert breaker.allow()  # the one probe
    assert not breaker.allow() and not breaker.available()  # no second probe while it runs
    breaker.failure()  # the probe failed: open again for a whole cooldown
    assert breaker.state == "open"
    now[0] = 20.0
    assert breaker.allow()
    breaker.success()
    assert breaker.state == "closed" and breaker.allow()


def test_success_resets_the_failure_count():
    breaker = CircuitBreaker(BreakerSettings(failures=2, cooldown=10), clock=lambda: 0.0)
    breaker.failure()
    breaker.success()
    breaker.failure()
    assert breaker.state == "closed"


def test_latency_estimate_starts_from_config_and_follows_observations():
    settings = BackendSettings(name="d", kind="diffusion", url="http://x", model="m", expected_latency=2.0)
    state = BackendState(settings, CircuitBreaker(BreakerSettings()))
    assert state.view().expected_latency == 2.0
    for _ in range(50):
        state.observe_latency(0.5)
    assert abs(state.view().expected_latency - 0.5) < 0.01
    default = BackendState(
        BackendSettings(name="a", kind="autoregressive", url="http://x", model="m"),
        CircuitBreaker(BreakerSettings()),
    )
    assert default.view().expected_latency == 2.87


def test_an_abandoned_probe_lets_the_next_one_through():
    now = [0.0]
    breaker = CircuitBreaker(BreakerSettings(failures=1, cooldown=5), clock=lambda: now[0])
    breaker.failure()
    now[0] = 5.0
    assert breaker.allow()
    breaker.abandon()  # the probe's client hung up before a verdict
    assert breaker.available() and breaker.allow()
