"""The difficulty scorer's configuration (``routing.scorer``, gathered by the ``routing:`` section)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["ScorerSettings", "SecondStageSettings"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SecondStageSettings(_Section):
    """The optional embedding second stage (gateway/routing/scorer/embedding.py, the router-embed extra): it
    decides the requests whose linear score falls in ``band``; off by default (tens of ms per request)."""

    enabled: bool = False
    # The linear scores it decides, inclusive; chosen by bench/router_embed_eval.py (docs/scorer.md).
    band: tuple[float, float] = (0.15, 0.6)
    model: str = "default"  # the shipped second-stage model, or a file bench/router_embed_eval.py wrote
    threads: int = Field(1, ge=1, le=64)  # torch's threads for one embedding

    @model_validator(mode="after")
    def _band(self) -> SecondStageSettings:
        lo, hi = self.band
        if not 0.0 <= lo < hi <= 1.0:
            raise ValueError(f"band must be [lo, hi] with 0 <= lo < hi <= 1, not [{lo}, {hi}]")
        return self


class ScorerSettings(_Section):
    """The difficulty scorer (gateway/routing/scorer/linear.py): hard requests go to the autoregressive
    backend."""

    enabled: bool = True
    # "default" is the model shipped in the package; otherwise the path of a file that
    # `gateway router train` wrote. Loaded at start-up: a missing or corrupt file stops the gateway.
    model: str = "default"
    # Scores at or above it are hard. None: the threshold the model was trained with (its model card).
    # A key or tier may set its own (route_threshold).
    threshold: float | None = Field(None, gt=0, lt=1)
    second_stage: SecondStageSettings = SecondStageSettings()
