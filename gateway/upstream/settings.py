"""The ``backends:`` section: where each backend is, what it serves, how it was started, and the deadlines
for talking to it.

Beside the upstream client, which reaches the backends with these; routing, the proxy and telemetry read
the same objects, and sit above this package (pyproject.toml, ``[tool.importlinter]``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, SecretStr, field_validator, model_validator

__all__ = ["BackendSettings", "DiffusionSettings", "TimeoutSettings"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TimeoutSettings(_Section):
    """Seconds. ``first_byte`` covers queueing plus prefill plus, on diffusion, a whole first canvas."""

    connect: float = Field(5.0, gt=0)
    first_byte: float = Field(120.0, gt=0)
    idle: float = Field(60.0, gt=0)
    total: float = Field(900.0, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> TimeoutSettings:
        if self.total < self.first_byte:
            raise ValueError("total must be at least first_byte")
        return self


class DiffusionSettings(_Section):
    """How the diffusion backend was served; the gateway labels every request it sends there with these.

    They are server-wide in vLLM (docs/backends.md): the sampler and its bound come from the checkpoint's
    generation config, the canvas and step cap from ``--diffusion-config``.
    """

    sampler: Literal["entropy_bound"] = "entropy_bound"
    entropy_bound: float = Field(0.1, gt=0, le=10)
    canvas_length: int = Field(256, ge=1, le=8192)
    max_denoising_steps: int = Field(48, ge=1, le=4096)


_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"


class BackendSettings(_Section):
    name: str = Field(pattern=_NAME_PATTERN)
    kind: Literal["diffusion", "autoregressive"]
    url: HttpUrl
    model: str = Field(min_length=1, max_length=256)
    api_key: SecretStr | None = None
    # What the backend was started with (--max-num-seqs); by kind when unset: DiffusionGemma is served
    # with 4 (docs/backends.md), vLLM's own default is 256.
    max_concurrency: int | None = Field(None, ge=1, le=100_000)
    diffusion: DiffusionSettings | None = None
    timeouts: TimeoutSettings = TimeoutSettings()
    # Seconds for a typical answer before any is observed (then a moving average of what is): the
    # spill-over decision compares it across backends. Default: the published H100 figures by kind.
    expected_latency: float | None = Field(None, gt=0)
    # The APIs it serves (vLLM 0.33 serves all four, docs/backends.md); requests for another API are routed
    # elsewhere or answered 404.
    endpoints: frozenset[Literal["chat", "completions", "responses", "messages"]] = Field(
        frozenset({"chat", "completions", "responses", "messages"}), min_length=1
    )

    @field_validator("url")
    @classmethod
    def _a_base_url(cls, url: HttpUrl) -> HttpUrl:
        """A base URL the API paths are appended to: a query or fragment would swallow them, and a
        user:password in it would be sent by some upstream clients and not others (api_key is the one
        credential a backend gets)."""
        if url.query or url.fragment:
            raise ValueError("a backend's URL takes no query or fragment: http(s)://HOST:PORT[/PREFIX]")
        if url.username or url.password:
            raise ValueError("a backend's URL holds no credentials: set its api_key instead")
        return url

    @model_validator(mode="after")
    def _diffusion_section(self) -> BackendSettings:
        if self.kind == "diffusion" and self.diffusion is None:
            # Frozen model: the default is filled in through object.__setattr__ once, at validation.
            object.__setattr__(self, "diffusion", DiffusionSettings())
        if self.max_concurrency is None:
            object.__setattr__(self, "max_concurrency", 4 if self.kind == "diffusion" else 256)
        if self.kind == "autoregressive" and self.diffusion is not None:
            raise ValueError("a 'diffusion' section is only valid on a backend of kind 'diffusion'")
        return self

    @property
    def base_url(self) -> str:
        return str(self.url).rstrip("/")
