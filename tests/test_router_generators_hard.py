"""The hard-prompt generators (training/gateway_training/generators/hard_*.py) keep the training-source
contract: deterministic draws, valid chat messages, declared labels and categories, few duplicates, and
the mix the scorer needs (system prompts, follow-up conversations, digit-free prompts, other languages).
"""

from __future__ import annotations

import ast
import functools
import importlib
import itertools
import json
import pkgutil
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import gateway_training.generators as generators
from gateway_training.generators import hard_deduction, hard_precise
from gateway_training.generators.hard_common import conversation, number_word
from gateway_training.sources import Example, Source
from tests.support import checkout_env

N = 200
# A source may repeat at most this share of its 200 draws (whole conversations compared as JSON).
MAX_DUPLICATE_RATE = 0.05
CATEGORIES = {"reasoning", "math-word", "math"}

MODULE_NAMES = sorted(m.name for m in pkgutil.iter_modules(generators.__path__) if m.name.startswith("hard_"))
MODULES = [importlib.import_module(f"{generators.__name__}.{name}") for name in MODULE_NAMES]
SOURCES: list[Source] = [s for mod in MODULES for s in mod.SOURCES]


@functools.cache  # several tests read the same draws; none mutates them
def _draws(source: Source, seed: int = 1) -> list[Example]:
    return source.examples(N, seed)


def _key(example: Example) -> str:
    return json.dumps(example.messages, sort_keys=True, ensure_ascii=False)


def _first_user(example: Example) -> str:
    return next(m["content"] for m in example.messages if m["role"] == "user")


def test_at_least_sixteen_hard_sources_with_unique_names():
    names = [s.name for s in SOURCES]
    assert len(names) >= 16
    assert len(set(names)) == len(names)
    for s in SOURCES:
        assert re.fullmatch(r"gen:[a-z][a-z-]*", s.name), s.name
        assert s.label == "hard"
        assert s.category in CATEGORIES
        assert s.licence == "Apache-2.0 (this project)"
    assert {s.category for s in SOURCES} == CATEGORIES


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_source_is_deterministic_valid_and_mostly_distinct(source: Source):
    first, again, other = _draws(source, 1), source.examples(N, 1), _draws(source, 2)
    assert [e.messages for e in first] == [e.messages for e in again]
    # A different seed gives a different stream, not the same examples in another order.
    assert len({_key(e) for e in first} & {_key(e) for e in other}) < N // 10

    for e in first:
        assert (e.label, e.source, e.category) == ("hard", source.name, source.category)
        msgs = e.messages
        assert isinstance(msgs, list) and msgs
        for m in msgs:
            assert set(m) == {"role", "content"}
            assert isinstance(m["content"], str) and m["content"].strip() == m["content"] and m["content"]
        roles = [m["role"] for m in msgs]
        turns = roles[1:] if roles[0] == "system" else roles
        assert "system" not in turns
        # user, assistant, user, ...: alternating, starting and ending with the user.
        assert turns[0] == "user" and turns[-1] == "user"
        assert all(a != b for a, b in itertools.pairwise(turns))
        json.dumps(e.to_json())

    duplicates = N - len({_key(e) for e in first})
    assert duplicates <= MAX_DUPLICATE_RATE * N, f"{source.name}: {duplicates} duplicates in {N}"


_DIGEST = """
import hashlib, importlib, json, pkgutil
import gateway_training.generators as g
h = hashlib.sha256()
for m in sorted(m.name for m in pkgutil.iter_modules(g.__path__) if m.name.startswith("hard_")):
    for s in importlib.import_module(f"{g.__name__}.{m}").SOURCES:
        for e in s.examples(60, 5):
            h.update(json.dumps(e.to_json(), sort_keys=True).encode())
print(h.hexdigest())
"""


def test_draws_do_not_depend_on_hash_randomisation():
    # Iterating over a set of strings would make a draw depend on PYTHONHASHSEED, i.e. on the process.
    digests = {
        subprocess.run(
            [sys.executable, "-c", _DIGEST],
            env=checkout_env(PYTHONHASHSEED=seed),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1


def test_mix_of_system_prompts_follow_ups_and_digit_free_prompts():
    examples = [e for s in SOURCES for e in _draws(s)]
    total = len(examples)
    with_system = sum(e.messages[0]["role"] == "system" for e in examples)
    # gen:bot-task greets an operator's bot before a problem that stands on its own: two user turns, but
    # not a follow-up (hard_context.py).
    follow_ups = [
        e for e in examples if sum(m["role"] == "user" for m in e.messages) > 1 and e.source != "gen:bot-task"
    ]
    digit_free = sum(not any(c.isdigit() for c in _first_user(e)) for e in examples)
    assert 0.12 * total <= with_system <= 0.3 * total  # "about a fifth"
    assert 0.06 * total <= len(follow_ups) <= 0.3 * total
    # Follow-ups are terse: hard only because the conversation before them is.
    assert all(len(e.messages[-1]["content"]) <= 120 for e in follow_ups)
    assert all(
        len(e.messages[-1]["content"]) < max(len(m["content"]) for m in e.messages[:-1]) for e in follow_ups
    )
    # Hard must not mean "has digits": a good share is written in words only.
    assert digit_free >= 0.3 * total


def test_every_source_has_system_prompts_and_follow_ups():
    for s in SOURCES:
        examples = _draws(s)
        assert any(e.messages[0]["role"] == "system" for e in examples), s.name
        assert any(sum(m["role"] == "user" for m in e.messages) > 1 for e in examples), s.name


def test_context_sources_put_the_difficulty_outside_the_newest_turn():
    by_name = {s.name: s for s in SOURCES}
    for e in _draws(by_name["gen:system-task"]):
        assert e.messages[0]["role"] == "system" and len(e.messages[0]["content"]) >= 80
        assert len(e.messages[-1]["content"]) <= 80
    chains = _draws(by_name["gen:followup-chain"])
    for e in chains:
        users = [m["content"] for m in e.messages if m["role"] == "user"]
        assert len(users) >= 2 and len(users[-1]) <= 80
    # The problems before are much longer than the follow-up (a few short competition questions aside).
    long_before = sum(
        sum(len(m["content"]) for m in e.messages[:-1] if m["role"] == "user")
        > 2 * len(e.messages[-1]["content"])
        for e in chains
    )
    assert long_before >= 0.95 * len(chains)


_LANGUAGE_MARKERS = {
    "de": {"ist", "und", "dass", "wie", "welchen", "welcher", "beweise", "zeige", "sind", "hat", "der"},
    "fr": {"est", "et", "que", "quel", "quelle", "combien", "les", "une", "démontre", "montre", "sont"},
    "es": {"es", "y", "que", "qué", "cuántas", "cuál", "las", "una", "demuestra", "son", "tiene"},
}


def _language(text: str) -> str | None:
    words = set(re.findall(r"[a-zà-ÿ]+", text.lower()))
    scores = {lang: len(words & markers) for lang, markers in _LANGUAGE_MARKERS.items()}
    best = max(scores, key=lambda lang: scores[lang])
    return best if scores[best] >= 2 else None


def test_german_french_and_spanish_variants_exist_for_puzzles_and_maths():
    non_english = [s for s in SOURCES if s.name.startswith("gen:ml-")]
    assert {s.category for s in non_english} == CATEGORIES
    for s in non_english:
        seen = {_language(_first_user(e)) for e in _draws(s)}
        assert {"de", "fr", "es"} <= seen, (s.name, seen)
    english = [e for s in SOURCES if not s.name.startswith("gen:ml-") for e in _draws(s)[:20]]
    assert sum(_language(_first_user(e)) is not None for e in english) < 0.05 * len(english)


# The routing design's own examples: the evaluation must not find them in the training data.
_ISSUE_PROMPTS = (
    "A bat and a ball cost $1.10 in total; the bat costs $1.00 more than the ball. How much is the ball?",
    "What is the last digit of 7 raised to the power 2024?",
    "Beweise, dass es unendlich viele Primzahlen gibt.",
    "A train leaves at 9:40 and the trip takes 2 h 35 min with a 20 min stop. When does it arrive?",
)


def test_issue_examples_are_not_reproduced():
    texts = {m["content"].lower() for s in SOURCES for e in _draws(s, 3) for m in e.messages}
    for prompt in _ISSUE_PROMPTS:
        assert prompt.lower() not in texts


def test_generators_import_only_the_standard_library_and_the_contract():
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    for mod in MODULES:
        tree = ast.parse(Path(mod.__file__ or "").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed or name.startswith("gateway_training."), (
                    mod.__name__,
                    name,
                )


def test_number_words():
    assert [number_word(n) for n in (0, 7, 19, 40, 42, 115, 999, 1000)] == [
        "zero",
        "seven",
        "nineteen",
        "forty",
        "forty-two",
        "one hundred and fifteen",
        "nine hundred and ninety-nine",
        "1000",
    ]


def test_conversation_shapes():
    rng = random.Random(0)
    shapes = {
        tuple(
            m["role"]
            for m in conversation(rng, "q", answer="a", followups=("f",), p_system=0.5, p_followup=0.5)
        )
        for _ in range(200)
    }
    assert shapes == {
        ("user",),
        ("system", "user"),
        ("user", "assistant", "user"),
        ("system", "user", "assistant", "user"),
    }
    # Without an answer there is nothing to follow up on.
    assert conversation(random.Random(0), "q", followups=("f",), p_system=0, p_followup=1) == [
        {"role": "user", "content": "q"}
    ]


def test_seating_puzzles_have_exactly_one_solution():
    # Re-reads the clues from the prompt text (an independent parser, not the generator's own checker) and
    # counts the arrangements that satisfy them all. Prompts whose surface was varied beyond parsing
    # (lowercased, a typo in a name or a clue word) are skipped; most are not.
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        prompt = _first_user(Example(hard_deduction._seating(rng), "hard", "gen:seating", "reasoning"))
        lines = prompt.split("\n")
        people = [w for w in re.findall(r"[A-Z][a-z]+", lines[0]) if w in hard_deduction.NAMES]
        clues = [ln.removeprefix("- ") for ln in lines[1:-1]]
        try:
            solutions = [q for q in itertools.permutations(people) if all(_clue_holds(c, q) for c in clues)]
        except LookupError:
            continue
        if len(people) < 4:
            continue
        checked += 1
        assert len(solutions) == 1, prompt
    assert checked >= 40


def _clue_holds(clue: str, q: tuple[str, ...]) -> bool:
    at = [q.index(w) for w in re.findall(r"[A-Z][a-z]+", clue) if w in q]
    if len(at) != (3 if "between" in clue else 1 if "end" in clue or "number one" in clue else 2):
        raise LookupError(clue)
    if "immediately" in clue or "directly below" in clue:
        return at[0] + 1 == at[1]
    if "somewhere" in clue:
        return at[0] < at[1]
    if "not next to" in clue:
        return abs(at[0] - at[1]) > 1
    if "not at either end" in clue:
        return at[0] not in (0, len(q) - 1)
    if "at one of the ends" in clue:
        return at[0] in (0, len(q) - 1)
    if "between" in clue:
        return abs(at[1] - at[2]) == 2 and 2 * at[0] == at[1] + at[2]
    if "number one" in clue:
        return at[0] == 0
    raise LookupError(clue)


def test_knights_and_knaves_puzzles_have_exactly_one_solution():
    # An independent reading of the statements in the prompt; varied-beyond-parsing prompts are skipped.
    rng = random.Random(11)
    checked = 0
    for _ in range(60):
        prompt = _first_user(Example(hard_deduction._knights(rng), "hard", "gen:knights", "reasoning"))
        kinds = [k for k in hard_deduction._ISLANDS if k[0] in prompt and k[1] in prompt]
        lines = prompt.split("\n")
        people = [w for w in re.findall(r"[A-Z][a-z]+", lines[0]) if w in hard_deduction.NAMES]
        said = [re.fullmatch(r"(\w+)(?: says:| tells you,|:) [\"'](.*)[\"']", ln) for ln in lines[1:-1]]
        if len(kinds) != 1 or len(people) < 2 or not said or not all(said):
            continue
        good, bad = kinds[0][0], kinds[0][1]
        statements = [(m.group(1), m.group(2)) for m in said if m]
        try:
            solutions = [
                w
                for values in itertools.product((True, False), repeat=len(people))
                for w in [dict(zip(people, values, strict=True))]
                if all(_statement_true(text, who, w, good, bad) == w[who] for who, text in statements)
            ]
        except LookupError:
            continue
        checked += 1
        assert len(solutions) == 1, prompt
    assert checked >= 40


def _statement_true(text: str, me: str, w: dict[str, bool], good: str, bad: str) -> bool:
    liars = sum(not v for v in w.values())
    rules: list[tuple[str, Callable[[re.Match[str]], bool]]] = [
        (rf"(\w+) is one of the {bad}\.", lambda m: not w[m.group(1)]),
        (rf"(\w+) is one of the {good}\.", lambda m: w[m.group(1)]),
        (r"(\w+) and I are the same kind\.", lambda m: w[m.group(1)] == w[me]),
        (r"(\w+) and I are different kinds\.", lambda m: w[m.group(1)] != w[me]),
        (rf"If I am one of the {good}, then so is (\w+)\.", lambda m: not w[me] or w[m.group(1)]),
        (rf"Either I or (\w+) is one of the {bad}, or both are\.", lambda m: not (w[me] and w[m.group(1)])),
        (rf"Exactly one of us is one of the {good}\.", lambda m: len(w) - liars == 1),
        (rf"At least one of us is one of the {bad}\.", lambda m: liars >= 1),
        (rf"All of us are {bad}\.", lambda m: liars == len(w)),
        (rf"Exactly two of us are {bad}\.", lambda m: liars == 2),
    ]
    for pattern, truth in rules:
        match = re.fullmatch(pattern, text)
        if match and (match.lastindex is None or match.group(1) in w):
            return truth(match)
    raise LookupError(text)


def test_precise_tasks_state_what_they_compute():
    # The follow-ups quote the computed answer: a True/False expression's value is what Python says, and
    # the closing brackets complete the sequence.
    pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
    rng = random.Random(7)
    for _ in range(300):
        text, value = hard_precise.boolean_expression(rng, rng.randint(1, 4))
        assert eval(text) is value, text  # noqa: S307 (the generator's own True/False/and/or/not text)
        shown, closing = hard_precise.bracket_sequence(rng)
        stack: list[str] = []
        for b in (shown + " " + closing).split():
            if b in pairs:
                stack.append(b)
            else:
                assert stack and pairs[stack.pop()] == b, (shown, closing)
        assert not stack
