"""A simulated vLLM backend (diffusion or autoregressive) that speaks vLLM's wire format.

What ``gateway demo`` runs, what the tests run against, what the benchmarks use as a zero-delay upstream.
"""

from gateway.simulator.app import create_simulator
from gateway.simulator.settings import PROFILES, SimulatorSettings

__all__ = ["PROFILES", "SimulatorSettings", "create_simulator"]
