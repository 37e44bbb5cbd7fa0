"""The routing policy's configuration (the ``routing:`` section)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gateway.backends.settings import BreakerSettings
from gateway.routing.scorer.settings import ScorerSettings

__all__ = ["QualitySettings", "RoutingSettings", "Rule", "RuleConditions", "SpilloverSettings"]


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
                        "keywords; use `hard: true` or `min_score`/`max_score` (docs/routing.md)"
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


class QualitySettings(_Section):
    """Checks on diffusion answers; a failed check re-runs the request on the autoregressive backend."""

    tool_json: bool = True  # tool-call arguments that are not JSON, or miss required parameters
    tool_required: bool = True  # tool_choice required or named, but no tool call came back
    empty: bool = True  # no content and no tool call
    markup: bool = True  # raw template markup (<|channel>, <tool_call|>...) in the text
    repetition: bool = True  # degenerate repetition


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
