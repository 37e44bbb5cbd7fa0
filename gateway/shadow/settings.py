"""The ``shadow:`` section: which requests are also sent to the other backend, what bounds that work,
the judge that compares the two answers, and what of it is kept."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["JudgeSettings", "ShadowSettings"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JudgeSettings(_Section):
    # The backend (by name) that compares the two answers; None: the first autoregressive backend. A model
    # judging its own answer tends to prefer it (docs/shadow.md): name another backend where there is one.
    backend: str | None = None
    # A judge request starts only when, with it, the judge backend runs at most this share of its
    # max_concurrency.
    max_load: float = Field(0.5, gt=0, le=1)
    # Backend tokens (prompt + completion) the judge may spend per minute; None: only max_load bounds it.
    budget_tokens_per_minute: int | None = Field(None, ge=1)
    # The verdict's own token limit: a JSON object with a short reason.
    max_tokens: int = Field(200, ge=16, le=4096)


class ShadowSettings(_Section):
    """Shadow evaluation (docs/shadow.md): off unless a share is set."""

    # The share of eligible requests also sent to the other backend (0.01: one in a hundred); 0: off.
    share: float = Field(0.0, ge=0, le=1)
    # A share per auth tier, over ``share``.
    tiers: dict[str, float] = Field(default_factory=dict)
    # A share per key name, over its tier's.
    keys: dict[str, float] = Field(default_factory=dict)
    # A shadow request starts only when, with it, the other backend runs at most this share of its
    # max_concurrency (clients' requests and the gateway's own all counted), so that a client's request
    # arriving meanwhile still finds a free sequence there.
    max_load: float = Field(0.5, gt=0, le=1)
    # Backend tokens (prompt + completion) shadow requests may spend per minute; None: only max_load
    # bounds them. Required with shared_gpu.
    budget_tokens_per_minute: int | None = Field(None, ge=1)
    # Both backends share one GPU: their load counts cannot see the contention between them, so shadowing
    # (and judging) stays off unless both budgets are set.
    shared_gpu: bool = False
    # The token limit both answers are held to when the request sets none (a pair where either answer
    # reached its limit is discarded: a cut answer is no fair comparison).
    max_tokens: int = Field(512, ge=16, le=32768)
    # Samples waiting for a worker, at most; past it a sample is dropped and counted (queue_full).
    queue_size: int = Field(64, ge=1, le=100_000)
    # Samples worked on at once (each: one shadow request, then two judge requests).
    workers: int = Field(2, ge=1, le=64)
    # The privacy switch: prompts, both answers, the judge's reason and the scorer's top features are
    # stored (in the usage database, usage.url) only when this is on; verdicts and scores always are.
    store_content: bool = False
    # Days a stored sample (with its content) is kept; older ones are deleted at start-up and hourly.
    retention_days: int = Field(7, ge=1, le=3660)
    # Characters kept of the prompt and of each answer (in storage and in the judge's prompt).
    max_content_chars: int = Field(16_000, ge=256, le=1_000_000)
    # What a missed saving costs against a regret, for the suggested threshold
    # (gateway router threshold): 0.2 means five missed savings weigh as much as one regret.
    cost_ratio: float = Field(0.2, ge=0, le=100)
    judge: JudgeSettings = JudgeSettings()

    @property
    def active(self) -> bool:
        """Whether any request may be sampled."""
        return self.share > 0 or any(v > 0 for v in (*self.tiers.values(), *self.keys.values()))

    @model_validator(mode="after")
    def _bounded(self) -> ShadowSettings:
        for name, value in (*self.tiers.items(), *self.keys.items()):
            if not 0 <= value <= 1:
                raise ValueError(f"shadow: the share for {name!r} must be between 0 and 1")
        budgets = self.budget_tokens_per_minute, self.judge.budget_tokens_per_minute
        if self.shared_gpu and self.active and None in budgets:
            raise ValueError(
                "shadow.shared_gpu: both backends share a GPU, where the gateway cannot see their "
                "contention: set shadow.budget_tokens_per_minute and "
                "shadow.judge.budget_tokens_per_minute, or turn shadowing off"
            )
        return self
