"""The public training collections shipped in training/gateway_training/data load, are valid, match what
bench/build_router_data.py says it builds, and carry prompts only (no answers)."""

from __future__ import annotations

import gzip
import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gateway_training import public
from gateway_training.data import DataError

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "training" / "gateway_training" / "data"
ROW_KEYS = {"messages", "label", "source", "category", "task"}


def _build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_router_data", ROOT / "bench" / "build_router_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = _build_script()


def _rows(name: str) -> list[dict[str, Any]]:
    with gzip.open(DATA / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_every_example_is_valid() -> None:
    examples = public.load_examples()
    assert {e.source for e in examples} == {BUILD.RG_SOURCE, BUILD.CC_SOURCE}
    for e in examples:
        assert e.source in public.LICENCES and public.LICENCES[e.source].strip()
        assert e.label in ("hard", "easy")
        assert e.category in public.CATEGORIES
        last = e.messages[-1]
        assert last["role"] == "user" and isinstance(last["content"], str) and last["content"].strip()
        for i, m in enumerate(e.messages):
            assert set(m) == {"role", "content"}
            # Conversations alternate, starting with the user.
            assert m["role"] == ("user" if i % 2 == 0 else "assistant")
            assert m["content"].strip()


def test_reasoning_gym_counts_per_task_are_as_the_build_script_says() -> None:
    rows = _rows(BUILD.RG_FILE)
    assert Counter(r["task"] for r in rows) == {task: BUILD.PER_TASK for task, _, _ in BUILD.TASKS}
    category = {task: cat for task, cat, _ in BUILD.TASKS}
    for r in rows:
        assert r["label"] == "hard" and r["source"] == BUILD.RG_SOURCE
        assert r["category"] == category[r["task"]]
        assert len(r["messages"]) == 1
    # Tasks come out in TASKS order, and no prompt is repeated.
    order = [task for task, _, _ in BUILD.TASKS]
    assert [r["task"] for r in rows] == sorted((r["task"] for r in rows), key=order.index)
    prompts = [r["messages"][0]["content"] for r in rows]
    assert len(set(prompts)) == len(prompts)
    assert 1500 <= len(rows) <= 2500
    assert (DATA / BUILD.RG_FILE).stat().st_size < 1_200_000


def test_chitchat_count_and_shape() -> None:
    rows = _rows(BUILD.CC_FILE)
    assert len(rows) == BUILD.CC_COUNT
    assert {(r["label"], r["source"], r["category"]) for r in rows} == {
        ("easy", BUILD.CC_SOURCE, "smalltalk")
    }
    assert {len(r["messages"]) for r in rows} == {1, 3, 5}
    assert all(len(m["content"]) <= BUILD.CC_MAX_CHARS for r in rows for m in r["messages"])
    keys = [json.dumps(r["messages"], sort_keys=True) for r in rows]
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("name", ["RG_FILE", "CC_FILE"])
def test_rows_carry_prompts_only(name: str) -> None:
    """No answer, solution or metadata field leaves the generator: only the keys the contract names."""
    for r in _rows(getattr(BUILD, name)):
        assert set(r) <= ROW_KEYS
        assert not {"answer", "metadata", "answer_cot", "solution"} & set(r)


@pytest.mark.parametrize("name", ["RG_FILE", "CC_FILE"])
def test_files_are_byte_reproducible(name: str, tmp_path: Path) -> None:
    """The committed file is exactly what the build script's writer makes of its rows (gzip mtime 0, no
    file name, sorted keys), so a rerun of the build produces the same bytes."""
    path = DATA / getattr(BUILD, name)
    raw = path.read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip MTIME
    assert not raw[3] & 0x08  # no FNAME
    out = tmp_path / "copy.jsonl.gz"
    BUILD.write_jsonl_gz(out, _rows(path.name))
    assert out.read_bytes() == raw


def test_load_is_deterministic() -> None:
    first = [e.to_json() for e in public.load_examples()]
    second = [e.to_json() for e in public.load_examples()]
    assert first == second
    assert len(first) == BUILD.PER_TASK * len(BUILD.TASKS) + BUILD.CC_COUNT


def test_a_source_without_a_licence_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(public.LICENCES, BUILD.CC_SOURCE)
    with pytest.raises(DataError, match="no licence"):
        public.load_examples()
