"""The routing policy's configuration (the ``routing:`` section)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "BreakerSettings",
    "QualitySettings",
    "RoutingSettings",
    "Rule",
    "RuleConditions",
    "ScorerSettings",
    "SecondStageSettings",
    "SpilloverSettings",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleConditions(_Section):
    """Every condition that is set must hold; an empty ``when`` matches every request."""

    principals: list[str] | None = None
    endpoint: Literal["chat", "completions", "responses", "messages"] | None = None
    has_tools: bool | None = None
    code: bool | None = None
    # The difficulty scorer's verdict: hard (score at or above the threshold in force) or not, and
    # bounds on the score itself.
    hard: bool | None = None
    min_score: float | None = Field(None, ge=0, le=1)
    max_score: float | None = Field(None, ge=0, le=1)
    thinking: bool | None = None
    min_messages: int | None = Field(None, ge=0)
    max_messages: int | None = Field(None, ge=0)
    min_prompt_chars: int | None = Field(None, ge=0)
    max_prompt_chars: int | None = Field(None, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for old in ("math", "reasoning"):
                if old in data:
                    raise ValueError(
                        f"`{old}` was removed: the difficulty scorer replaced the maths and reasoning "
                        "keywords; use `hard: true` or `min_score`/`max_score` (README, Routing)"
                    )
        return data


class Rule(_Section):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    when: RuleConditions = RuleConditions()
    backend: str


class SpilloverSettings(_Section):
    # reroute: a request that would wait on a full diffusion backend longer than the autoregressive one
    # takes goes there instead; queue: it waits for a diffusion slot in a bounded queue; off: neither.
    mode: Literal["reroute", "queue", "off"] = "reroute"
    max_queue: int = Field(64, ge=0)
    queue_timeout: float = Field(30.0, gt=0)


class BreakerSettings(_Section):
    failures: int = Field(3, ge=1)  # consecutive failures that open the breaker
    cooldown: float = Field(30.0, gt=0)  # seconds open before one probe request is let through


class QualitySettings(_Section):
    """Checks on diffusion answers; a failed check re-runs the request on the autoregressive backend."""

    tool_json: bool = True  # tool-call arguments that are not JSON, or miss required parameters
    tool_required: bool = True  # tool_choice required or named, but no tool call came back
    empty: bool = True  # no content and no tool call
    markup: bool = True  # raw template markup (<|channel>, <tool_call|>...) in the text
    repetition: bool = True  # degenerate repetition


class SecondStageSettings(_Section):
    """The optional embedding second stage (gateway/routing/embedding.py, the router-embed extra): it
    decides the requests whose linear score falls in ``band``; off by default (tens of ms per request)."""

    enabled: bool = False
    # The linear scores it decides, inclusive; chosen by bench/router_embed_eval.py (README, Routing).
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
    """The difficulty scorer (gateway/routing/scorer.py): hard requests go to the autoregressive backend."""

    enabled: bool = True
    # "default" is the model shipped in the package; otherwise the path of a file that
    # `gateway router train` wrote. Loaded at start-up: a missing or corrupt file stops the gateway.
    model: str = "default"
    # Scores at or above it are hard. None: the threshold the model was trained with (its model card).
    # A key or tier may set its own (route_threshold).
    threshold: float | None = Field(None, gt=0, lt=1)
    second_stage: SecondStageSettings = SecondStageSettings()


class RoutingSettings(_Section):
    # Model names that choose a backend by name, e.g. {fast: diffusion, quality: autoregressive}; when
    # empty, "fast" and "quality" name the first diffusion and the first autoregressive backend.
    aliases: dict[str, str] = Field(default_factory=dict)
    # A temperature other than 1.0 on a diffusion-bound request: dropped ("adapt"; the model samples with
    # its entropy bound anyway) or a reason to route to the autoregressive backend ("route").
    temperature: Literal["adapt", "route"] = "adapt"
    rules: list[Rule] = Field(default_factory=list)
    # Whether hard and tool-heavy requests may fall back to the diffusion backend when the autoregressive
    # one fails (a weaker answer rather than none).
    fallback_to_diffusion: bool = True
    retry_budget: int = Field(1, ge=0, le=5)  # further attempts after the first, per request
    breaker: BreakerSettings = BreakerSettings()
    health_interval: float = Field(5.0, gt=0)  # seconds between background /health probes
    spillover: SpilloverSettings = SpilloverSettings()
    quality: QualitySettings = QualitySettings()
    scorer: ScorerSettings = ScorerSettings()
    # Speed tiers: diffusion_max_steps sent as vllm_xargs for a tier (it can only lower the server's cap).
    speed_tiers: dict[str, int] = Field(default_factory=lambda: {"fast": 24, "fastest": 12})
