"""Reading a scorer model: the shipped one or a file ``gateway router train`` wrote, checked at start-up.

Format 1 (one head: a number per feature and word) and format 2 (several heads: per table, its keys and
a column of weights per head, ``weights.columns_of``). A missing, unreadable or malformed file is a
``ModelError`` with the reason, never a silent fallback to another policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gateway.errors import ModelError
from gateway.routing.scorer import model_file
from gateway.routing.scorer import weights as tables
from gateway.routing.scorer.linear import (
    DEFAULT_MODEL,
    FORMAT,
    FORMAT_HEADS,
    MEANING_BLOCKS,
    ONE_HEAD,
    Head,
    ScorerModel,
)
from gateway.routing.scorer.settings import ScorerSettings

__all__ = ["load_model", "parse_model", "scorer_for"]


def scorer_for(settings: ScorerSettings) -> ScorerModel | None:
    """The model routing.scorer names, loaded now (start-up), or None when the scorer is off."""
    return load_model(settings.model) if settings.enabled else None


def load_model(name_or_path: str | Path = DEFAULT_MODEL) -> ScorerModel:
    """The shipped model (``"default"``) or a model file written by ``gateway router train``."""
    raw, label = model_file.read(name_or_path, "default.json.gz", "routing model")
    model = parse_model(raw, label)
    del raw
    model_file.give_back_freed_memory()
    return model


def parse_model(raw: bytes, label: str = "routing model") -> ScorerModel:
    data = model_file.decode(raw, label, (FORMAT, FORMAT_HEADS), " (see gateway router train)")
    weights = data.get("weights")
    if not isinstance(weights, dict) or not weights:
        raise ModelError(f"{label} holds no weights")
    heads = _heads(data, label)
    meaning = data.get("meaning", {})
    if not isinstance(meaning, dict) or not set(meaning) <= set(MEANING_BLOCKS):
        raise ModelError(f"{label} has malformed meaning weights (blocks {', '.join(MEANING_BLOCKS)} only)")
    if not all(isinstance(table, dict) for table in meaning.values()):
        raise ModelError(f"{label} has malformed meaning weights")
    try:
        threshold = float(data["threshold"])
        meta = data.get("meta")
        meta = meta if isinstance(meta, dict) else {}
        damping = _damping(data, label)
        if heads is ONE_HEAD:
            model = ScorerModel(weights, data["bias"], threshold, meta, meaning, damping=damping)
        else:
            model = ScorerModel.from_columns(
                tables.columns_of(weights),
                data["bias"],
                threshold,
                meta,
                {b: tables.columns_of(t) for b, t in meaning.items()},
                heads,
                damping,
            )
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{label} is incomplete or malformed: {exc!r}") from exc
    if not model.finite():
        raise ModelError(f"{label} holds a weight that is not a finite number")
    if not 0.0 < threshold < 1.0:
        raise ModelError(f"{label} has threshold {threshold}, out of range (0, 1)")
    return model


def _heads(data: dict[str, Any], label: str) -> tuple[Head, ...]:
    if data["format"] == FORMAT:
        return ONE_HEAD
    raw = data.get("heads")
    if not isinstance(raw, list) or not all(
        isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("hard"), bool)
        for h in raw
    ):
        raise ModelError(f'{label} has malformed heads (a list of {{"name": ..., "hard": true|false}})')
    heads = tuple(Head(h["name"], h["hard"]) for h in raw)
    if {h.hard for h in heads} != {True, False}:
        raise ModelError(f"{label} needs a hard head and an easy one")
    return heads


def _damping(data: dict[str, Any], label: str) -> float | None:
    """The words per block from which the model damps a block's sum (``blocks.damping``); a file
    written before there was damping has none."""
    value = data.get("damping")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e6:
        raise ModelError(f"{label} has damping {value!r}: a number of words, above 0")
    return float(value)
