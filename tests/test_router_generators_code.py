"""The plain-words code generators (code_howto.py, code_reports.py, code_changes.py): the training-source
contract (deterministic, valid chat messages, labelled hard/code, enough distinct examples for the 300 per
source the evaluation draws) and what makes them a family of their own: no fence, backtick or code line
for the structural rules to catch, so only the scorer's reading of the words routes them.
"""

from __future__ import annotations

import itertools
import json
import re

import pytest

from gateway_training.generators import code_changes, code_common, code_howto, code_reports
from gateway_training.sources import Example, Source

SOURCES: list[Source] = [*code_howto.SOURCES, *code_reports.SOURCES, *code_changes.SOURCES]
N = 400
MIN_DISTINCT = 300  # bench/router_loso.py draws 300 per source and drops duplicates


def _key(example: Example) -> str:
    return json.dumps(example.messages, sort_keys=True, ensure_ascii=False)


def test_names_are_new_and_the_helper_module_has_no_source() -> None:
    names = [s.name for s in SOURCES]
    assert len(names) == len(set(names)) == 7
    assert all(re.fullmatch(r"gen:code-[a-z-]+", n) for n in names)
    assert code_common.SOURCES == ()


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_source_is_deterministic_valid_and_distinct(source: Source) -> None:
    assert (source.label, source.category, source.licence) == ("hard", "code", "Apache-2.0 (this project)")
    first, again, other = source.examples(N, 1), source.examples(N, 1), source.examples(N, 2)
    assert [e.messages for e in first] == [e.messages for e in again]
    assert [_key(e) for e in first] != [_key(e) for e in other]
    assert len({_key(e) for e in first}) >= MIN_DISTINCT
    for e in first:
        roles = [m["role"] for m in e.messages]
        turns = roles[1:] if roles[0] == "system" else roles
        assert turns[0] == "user" and turns[-1] == "user" and "system" not in turns
        assert all(a != b for a, b in itertools.pairwise(turns))
        for m in e.messages:
            assert m["content"].strip() == m["content"] != ""
            assert not re.search(r"[{}`]|\s{2}", m["content"]), m["content"]  # no slot, no code span


def test_shapes_mix_system_prompts_and_earlier_turns() -> None:
    examples = [e for s in SOURCES for e in s.examples(N, 3)]
    with_system = sum(e.messages[0]["role"] == "system" for e in examples) / len(examples)
    multi_turn = sum(any(m["role"] == "assistant" for m in e.messages) for e in examples) / len(examples)
    assert 0.12 <= with_system <= 0.3, with_system
    assert 0.08 <= multi_turn <= 0.25, multi_turn
