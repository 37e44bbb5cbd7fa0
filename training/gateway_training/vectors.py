"""Static word vectors for training the scorer's meaning features (``data/word_vectors.bin.gz``).

The file is built by ``bench/build_word_vectors.py`` (all-MiniLM-L6-v2's whole-word vocabulary, each word
embedded alone, reduced and quantised to int8) and committed, so that training needs numpy only. Format:
gzip (mtime 0) of one JSON header line, ``{"format": ..., "dims": D, "words": [...]}``, then the
``len(words) x D`` int8 matrix, row-major.

Only training reads it: a trained model keeps one number per word and block (fit.py), never a vector.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from gateway.errors import DataError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FORMAT", "WordVectors", "encode", "load_word_vectors"]

FORMAT = "gateway-word-vectors/1"
FILE = "word_vectors.bin.gz"
SCALE = 127.0  # int8 components of L2-normalised vectors


@dataclass(frozen=True, slots=True)
class WordVectors:
    words: tuple[str, ...]
    index: dict[str, int]
    vectors: np.ndarray  # float64, len(words) x dims, rows of unit length (to quantisation)

    @property
    def dims(self) -> int:
        return int(self.vectors.shape[1])


def encode(words: list[str], table: np.ndarray) -> bytes:
    header = json.dumps({"format": FORMAT, "dims": int(table.shape[1]), "words": words}, ensure_ascii=False)
    return gzip.compress(header.encode() + b"\n" + table.astype("int8").tobytes(), compresslevel=9, mtime=0)


@cache  # read once per process: the leave-one-source-out evaluation fits a model per source
def load_word_vectors() -> WordVectors:
    """The table shipped with the training code; a missing or damaged file is a DataError."""
    import numpy as np

    label = f"training/gateway_training/data/{FILE}"
    try:
        raw = gzip.decompress(resources.files("gateway_training").joinpath("data", FILE).read_bytes())
        header_end = raw.index(b"\n")
        header = json.loads(raw[:header_end])
        words, dims = header["words"], int(header["dims"])
    except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"cannot read the word vectors {label}: {exc} (bench/build_word_vectors.py)") from exc
    body = raw[header_end + 1 :]
    if header.get("format") != FORMAT or len(body) != len(words) * dims:
        raise DataError(f"the word vectors {label} are damaged or of another format (rebuild them)")
    vectors = np.frombuffer(body, dtype=np.int8).reshape(len(words), dims).astype(np.float64) / SCALE
    return WordVectors(tuple(words), {w: i for i, w in enumerate(words)}, vectors)
