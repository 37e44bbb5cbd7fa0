"""Simulator settings and timing profiles.

Timings follow each kind (docs/backends.md): the diffusion kind pays prefill plus one whole canvas of
denoising before its first chunk, then sends one chunk per canvas; the autoregressive kind pays its
time to first token, then sends token by token.

Profiles (published figures, docs/backends.md):
    h100       DiffusionGemma 26B-A4B: TTFT 489 ms, 1,282 tok/s while generating, so a 256-token canvas
               of 48 steps takes 0.20 s and prefill the remaining 0.29 s. Gemma 4 26B-A4B: TTFT 53 ms,
               205 tok/s.
    dgx-spark  DiffusionGemma NVFP4 on GB10: 158 tok/s with a full canvas, so 1.62 s per canvas; a short
               reply at about 16 tok/s fits a 0.3 s prefill. The only published AR figure for the box is
               about 14 tok/s (a 100B+ model): used as is, a pessimistic stand-in for Gemma 4 there.
    instant    no delays at all: the zero-latency upstream for tests and overhead benchmarks.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PROFILES", "Fault", "SimulatorSettings", "Timing"]


class Timing(BaseModel):
    model_config = ConfigDict(frozen=True)

    prefill_s: float = Field(0.0, ge=0)  # diffusion: before the first canvas starts
    canvas_s: float = Field(0.0, ge=0)  # diffusion: one full canvas at max_denoising_steps
    ttft_s: float = Field(0.0, ge=0)  # autoregressive: time to first token
    token_s: float = Field(0.0, ge=0)  # autoregressive: per further token


PROFILES: dict[str, Timing] = {
    "h100": Timing(prefill_s=0.289, canvas_s=256 / 1282, ttft_s=0.053, token_s=1 / 205),
    "dgx-spark": Timing(prefill_s=0.30, canvas_s=256 / 158, ttft_s=0.25, token_s=1 / 14),
    "instant": Timing(),
}


class Fault(BaseModel):
    """A failure to inject, from settings (every request) or the ``x-sim-fault`` header (one request).

    Header form: ``status=503``, ``delay=2``, ``drop_after=1``, ``error_after=1``, ``stall_after=1``,
    comma-separated. ``*_after=N`` acts after N body chunks (0: before the first).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: int | None = Field(None, ge=400, le=599)
    delay: float = Field(0.0, ge=0)  # seconds before anything is sent
    drop_after: int | None = Field(None, ge=0)  # close the connection without finishing the body
    error_after: int | None = Field(None, ge=0)  # in-band error event, then [DONE]
    stall_after: int | None = Field(None, ge=0)  # stop sending, keep the connection open
    # A rough answer, as the gemma4 parser has produced on diffusion output (docs/backends.md).
    rough: Literal["markup", "empty", "tool_json", "tool_args", "no_tool", "repetition"] | None = None

    @classmethod
    def parse(cls, header: str) -> Fault:
        values: dict[str, str] = {}
        for part in header.split(","):
            key, _, value = part.strip().partition("=")
            if key:
                values[key.strip()] = value.strip()
        return cls.model_validate(values)


class SimulatorSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["diffusion", "autoregressive"]
    model: str = ""
    max_concurrency: int = Field(4, ge=1)
    profile: str = "h100"
    timing: Timing | None = None  # overrides the profile
    api_key: str | None = None
    canvas_length: int = Field(256, ge=1)
    max_denoising_steps: int = Field(48, ge=1)
    max_model_len: int = Field(32768, ge=16)
    # The generation APIs it serves; an older vLLM lacks /v1/responses or /v1/messages (404 there).
    endpoints: frozenset[Literal["chat", "completions", "responses", "messages"]] = frozenset(
        {"chat", "completions", "responses", "messages"}
    )
    fault: Fault | None = None
    # As a judge (the autoregressive kind, simulator/quality.py): the share of judge prompts answered "the
    # first is better" whatever they hold, and the share answered in prose instead of JSON.
    judge_position_bias: float = Field(0.1, ge=0, le=1)
    judge_unparsable: float = Field(0.0, ge=0, le=1)

    def resolved_model(self) -> str:
        if self.model:
            return self.model
        return (
            "nvidia/diffusiongemma-26B-A4B-it-NVFP4"
            if self.kind == "diffusion"
            else "google/gemma-4-26B-A4B-it"
        )

    def resolved_timing(self) -> Timing:
        if self.timing is not None:
            return self.timing
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}; known: {', '.join(PROFILES)}")
        return PROFILES[self.profile]
