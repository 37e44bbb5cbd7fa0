"""The files the routing models live in: gzip'd JSON with a ``format`` tag, shipped in the package or
written by training. Read and written here once for the scorer and the embedding second stage, so a
missing, unreadable or foreign file is the same clear start-up error for both."""

from __future__ import annotations

import ctypes
import gzip
import json
from importlib import resources
from pathlib import Path
from typing import Any

from gateway.errors import ModelError

__all__ = ["SHIPPED", "decode", "encode", "give_back_freed_memory", "read"]

SHIPPED = "default"  # the name that means "the model shipped in the package"


def read(name_or_path: str | Path, shipped_file: str, what: str) -> tuple[bytes, str]:
    """The bytes of the shipped model (``"default"``: ``gateway/routing/scorer/models/<shipped_file>``)
    or of a file, and the label errors name it by."""
    if str(name_or_path) == SHIPPED:
        label = f"the shipped {what} (gateway/routing/scorer/models/{shipped_file})"
        try:
            shipped = resources.files("gateway.routing.scorer").joinpath("models", shipped_file)
            return shipped.read_bytes(), label
        except OSError as exc:
            raise ModelError(f"{label} is missing from the installation: {exc}") from exc
    label = f"{what} {name_or_path}"
    try:
        return Path(name_or_path).read_bytes(), label
    except OSError as exc:
        raise ModelError(f"cannot read {label}: {exc.strerror or exc}") from exc


def decode(raw: bytes, label: str, fmt: str | tuple[str, ...], hint: str = "") -> dict[str, Any]:
    """The JSON object of a model file (gzip'd or not), checked to carry the ``format`` ``fmt`` (or one
    of them)."""
    formats = (fmt,) if isinstance(fmt, str) else fmt
    try:
        data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    except (OSError, EOFError, ValueError) as exc:
        raise ModelError(f"{label} is not a gzip'd JSON model file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") not in formats:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        expected = " or ".join(map(repr, formats))
        raise ModelError(f"{label} has format {found!r}; expected {expected}{hint}")
    return data


def encode(data: dict[str, Any]) -> bytes:
    """A model file's bytes; mtime=0, so the same model gives the same bytes (reproducible training)."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def give_back_freed_memory() -> None:
    """Hand the C heap's free pages back to the system after a model is read (glibc's malloc_trim;
    elsewhere nothing). Reading a model file makes a few large buffers (the file, its text) and freeing
    them raises glibc's threshold for serving allocations from mmap, so the tables built next land in
    the heap around the freed space, which the process then keeps (several MB for the shipped model;
    docs/performance.md)."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # the process's own C library
    if trim is not None:
        trim(0)
