"""Reading and writing a scorer model file, checked at start-up.

One format, ``gateway-router/3``: gzip of a JSON header line (format, feature set, bias, calibration,
threshold, shape weights, the weights' scale, the model card's facts) followed by the hashed weights as
little-endian 16-bit integers (``2**BITS`` of them, times the scale). A missing, unreadable or malformed
file, or one trained on another feature set, is a ``ModelError`` with the reason, never a silent
fallback to another policy.
"""

from __future__ import annotations

import gzip
import json
import math
import sys
import zlib
from array import array
from importlib import resources
from pathlib import Path

from gateway.errors import ModelError
from gateway.routing.scorer.model import ScorerModel
from gateway.routing.scorer.settings import ScorerSettings
from gateway.routing.scorer.vector import BITS, FEATURE_SET

__all__ = ["DEFAULT_MODEL", "FORMAT", "dump_model", "load_model", "parse_model", "scorer_for"]

FORMAT = "gateway-router/3"
DEFAULT_MODEL = "default"  # the model shipped in gateway/routing/scorer/models/
_SHIPPED_FILE = "default.bin.gz"
_LIMIT = 32767


def scorer_for(settings: ScorerSettings) -> ScorerModel | None:
    """The model routing.scorer names, loaded now (start-up), or None when the scorer is off."""
    return load_model(settings.model, compiled=settings.compiled) if settings.enabled else None


def load_model(name_or_path: str | Path = DEFAULT_MODEL, *, compiled: bool = True) -> ScorerModel:
    """The shipped model (``"default"``) or a model file written by ``gateway router train``."""
    if str(name_or_path) == DEFAULT_MODEL:
        label = f"the shipped routing model (gateway/routing/scorer/models/{_SHIPPED_FILE})"
        try:
            raw = resources.files("gateway.routing.scorer").joinpath("models", _SHIPPED_FILE).read_bytes()
        except OSError as exc:
            raise ModelError(f"{label} is missing from the installation: {exc}") from exc
    else:
        label = f"routing model {name_or_path}"
        try:
            raw = Path(name_or_path).read_bytes()
        except OSError as exc:
            raise ModelError(f"cannot read {label}: {exc.strerror or exc}") from exc
    return parse_model(raw, label, compiled=compiled)


def parse_model(raw: bytes, label: str = "routing model", *, compiled: bool = True) -> ScorerModel:
    try:
        data = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise ModelError(f"{label} is not a gzip'd model file ({exc})") from exc
    head, _, body = data.partition(b"\n")
    try:
        meta = json.loads(head)
    except ValueError as exc:
        raise ModelError(f"{label} has no readable header ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ModelError(f"{label} has format {found!r}; expected {FORMAT!r} (see gateway router train)")
    if meta.get("feature_set") != FEATURE_SET:
        raise ModelError(
            f"{label} was trained on features {meta.get('feature_set')!r}, but this gateway computes "
            f"{FEATURE_SET!r}: retrain it with this version (gateway router train)"
        )
    if meta.get("bits") != BITS or len(body) != 2 << BITS:
        raise ModelError(f"{label} holds {len(body) // 2} weights; expected {1 << BITS}")
    packed = array("h")
    packed.frombytes(body)
    if sys.byteorder == "big":
        packed.byteswap()
    try:
        scale = float(meta["scale"])
        a, b = (float(x) for x in meta["calibration"])
        shape = {str(k): float(v) for k, v in dict(meta["shape"]).items()}
        model = ScorerModel(
            packed,
            shape,
            float(meta["bias"]),
            scale=scale,
            calibration=(a, b),
            threshold=float(meta["threshold"]),
            meta=meta.get("meta") if isinstance(meta.get("meta"), dict) else {},
            compiled=compiled,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{label} is incomplete or malformed: {exc!r}") from exc
    if not model.finite():
        raise ModelError(f"{label} holds a weight that is not a finite number")
    if not 0.0 < model.threshold < 1.0:
        raise ModelError(f"{label} has threshold {model.threshold}, out of range (0, 1)")
    return model


def dump_model(model: ScorerModel) -> bytes:
    """A model file's bytes: the same model gives the same bytes (gzip without a time stamp)."""
    weights = [model.scale * w for w in model.weights]
    largest = max(map(abs, weights), default=0.0)
    scale = largest / _LIMIT if largest else 1.0
    packed = array("h", [max(-_LIMIT, min(_LIMIT, round(w / scale))) for w in weights])
    if sys.byteorder == "big":
        packed.byteswap()
    header = {
        "format": FORMAT,
        "feature_set": model.feature_set,
        "bits": BITS,
        "bias": model.bias,
        "calibration": list(model.calibration),
        "threshold": model.threshold,
        "scale": scale,
        "shape": dict(sorted(model.shape.items())),
        "meta": model.meta,
    }
    text = json.dumps(header, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if not math.isfinite(scale):
        raise ValueError("a weight is not a finite number")
    return gzip.compress(text.encode() + b"\n" + packed.tobytes(), compresslevel=9, mtime=0)
