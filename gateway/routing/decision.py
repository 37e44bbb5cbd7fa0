"""The routing decision: a pure function, no I/O, that returns its candidates and its reasons.

Reason codes:
    ``model``    the request named a backend (by its model id or its name);
    ``default``  ``auto``: the diffusion backend, the first configured one if there is none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.config import BackendSettings

__all__ = ["AUTO", "Decision", "decide"]

AUTO = "auto"


@dataclass(frozen=True, slots=True)
class Decision:
    # Ordered: the first is tried first.
    candidates: tuple[BackendSettings, ...]
    reasons: tuple[str, ...]


def decide(model: str, backends: Sequence[BackendSettings]) -> Decision | None:
    """The backends to try for ``model``, or None when no backend serves it."""
    if model == AUTO:
        diffusion = [b for b in backends if b.kind == "diffusion"]
        return Decision(candidates=((diffusion or list(backends))[0],), reasons=("default",))
    for backend in backends:
        if model in (backend.model, backend.name):
            return Decision(candidates=(backend,), reasons=("model",))
    return None
