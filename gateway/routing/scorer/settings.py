"""The difficulty scorer's configuration (``routing.scorer``, gathered by the ``routing:`` section)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ScorerSettings"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScorerSettings(_Section):
    """The difficulty scorer (gateway/routing/scorer/model.py): hard requests go to the autoregressive
    backend."""

    enabled: bool = True
    # "default" is the model shipped in the package; otherwise the path of a file that
    # `gateway router train` wrote. Loaded at start-up: a missing or corrupt file stops the gateway.
    model: str = "default"
    # Scores at or above it are hard. None: the threshold the model was trained with (its model card).
    # A key or tier may set its own (route_threshold).
    threshold: float | None = Field(None, gt=0, lt=1)
    # Sum the scorer's hashed features with its compiled kernel where the install built it (the same
    # scores, docs/scorer.md#decision-time); false runs the pure-Python reference everywhere.
    compiled: bool = True
