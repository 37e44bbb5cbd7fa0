"""The "easy" prompt generators: deterministic, well-formed, varied, and labelled as declared."""

from __future__ import annotations

import json
import statistics

import pytest

from gateway_training.data import builtin_sources
from gateway_training.generators import easy_common
from gateway_training.sources import Source

# Every easy generator, found as training finds them: a module listed by hand here missed the sources
# added after it (six of them went untested).
SOURCES: list[Source] = [s for s in builtin_sources() if s.label == "easy"]
CATEGORIES = {"smalltalk", "factual", "transform", "writing", "advice"}
N = 200
# Greetings and follow-ups ("thanks!", "hi") are short by nature and real traffic repeats them, so
# small talk may repeat more often than the families with a long or slotted request.
MAX_DUPLICATE_SHARE = {"smalltalk": 0.30}
DEFAULT_MAX_DUPLICATE_SHARE = 0.20
# Two sources that were not checked here before (the list of modules was by hand), held to what they
# draw: changing them would change the shipped model's training data. Short questions about
# programming from a small template set repeat more; the French and Italian texts to transform are
# shorter than the English ones.
MAX_DUPLICATE_SHARE_OF = {"gen:tech-chat": 0.40}
LONGEST_TEXT_OF = {"gen:transform-fr-it": 800}
NON_ENGLISH = ("-de", "-fr", "-es", "-it-pt")
# The easy prompts the routing targets name are the scorer's regression tests: no generator may produce
# them.
REGRESSION_PROMPTS = (
    "explain why the sky is blue, in one sentence.",
    "give me a 20-minute work out i can do at home.",
    "what proof of address do i need to open a uk bank account?",
    "plan a simple dinner menu for 12/25/2024 for six people.",
    "how do i build a home library on a budget?",
    "tell me a riddle for my 6-year-old.",
)


def _key(messages: list[dict[str, str]]) -> str:
    return json.dumps(messages, ensure_ascii=False, sort_keys=True)


def test_the_set_is_large_and_names_are_unique() -> None:
    names = [s.name for s in SOURCES]
    assert len(names) >= 14
    assert len(set(names)) == len(names)
    assert all(name.startswith("gen:") for name in names)
    assert {s.category for s in SOURCES} == CATEGORIES
    assert sum(name.endswith(NON_ENGLISH) for name in names) >= 5
    assert easy_common.SOURCES == ()  # helpers only, no family of its own


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_source_draws_valid_deterministic_varied_examples(source: Source) -> None:
    assert source.label == "easy"
    assert source.category in CATEGORIES
    assert source.licence == "Apache-2.0 (this project)"
    first = source.examples(N, seed=7)
    again = source.examples(N, seed=7)
    other = source.examples(N, seed=8)
    assert [_key(e.messages) for e in first] == [_key(e.messages) for e in again]
    assert [_key(e.messages) for e in first] != [_key(e.messages) for e in other]
    for example in first:
        assert (
            example.label == "easy" and example.source == source.name and example.category == source.category
        )
        roles = [m["role"] for m in example.messages]
        assert roles[-1] == "user"
        assert set(roles) <= {"system", "user", "assistant"}
        assert "system" not in roles[1:]  # a system prompt only ever comes first
        assert all(isinstance(m["content"], str) and m["content"].strip() for m in example.messages)
        assert "{" not in example.messages[-1]["content"] or source.category == "transform"
    duplicates = 1 - len({_key(e.messages) for e in first}) / N
    limit = MAX_DUPLICATE_SHARE_OF.get(
        source.name, MAX_DUPLICATE_SHARE.get(source.category, DEFAULT_MAX_DUPLICATE_SHARE)
    )
    assert duplicates <= limit, duplicates


def test_unfilled_template_slots_never_reach_a_prompt() -> None:
    for source in SOURCES:
        for example in source.examples(N, seed=3):
            for message in example.messages:
                text = message["content"]
                assert "{" not in text and "}" not in text, (source.name, text)


def test_no_generator_reproduces_a_regression_prompt() -> None:
    for source in SOURCES:
        for example in source.examples(1000, seed=13):
            text = example.messages[-1]["content"].lower().strip()
            assert not any(prompt.rstrip(".?") in text for prompt in REGRESSION_PROMPTS), (source.name, text)


def test_conversation_shapes_mix_system_prompts_and_follow_ups() -> None:
    examples = [e for s in SOURCES for e in s.examples(N, seed=11)]
    with_system = sum(e.messages[0]["role"] == "system" for e in examples) / len(examples)
    multi_turn = sum(any(m["role"] == "assistant" for m in e.messages) for e in examples) / len(examples)
    assert 0.12 <= with_system <= 0.35, with_system  # "about a fifth"
    assert 0.05 <= multi_turn <= 0.3, multi_turn


def test_transform_requests_carry_a_long_text_with_numbers() -> None:
    for source in (s for s in SOURCES if s.category == "transform"):
        # the first user turn holds the text (a follow-up turn may come after it)
        first_user = [
            next(m["content"] for m in e.messages if m["role"] == "user") for e in source.examples(N, seed=5)
        ]
        lengths = [len(t) for t in first_user]
        assert statistics.median(lengths) >= 500, (source.name, statistics.median(lengths))
        assert max(lengths) >= LONGEST_TEXT_OF.get(source.name, 1200), source.name
        assert sum(any(ch.isdigit() for ch in t) for t in first_user) >= N * 0.8, source.name
