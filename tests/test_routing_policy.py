"""The routing decision, table-driven: a pure function of (request, backend states, policy)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from gateway.errors import InvalidRequest, NotFound, PermissionDenied
from gateway.routing import BackendView, RouteInput, decide, extract_features
from gateway.routing.features import RequestFeatures, _has_code
from gateway.routing.scorer.model import Difficulty
from gateway.routing.settings import RoutingSettings

D = BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=4, expected_latency=0.9)
A = BackendView(
    name="autoregressive", kind="autoregressive", model="g4", max_concurrency=256, expected_latency=2.9
)
POLICY = RoutingSettings()
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def route(payload: dict[str, Any], *, model: str = "auto", backends=(D, A), policy=POLICY, **kw: Any):
    features = extract_features(payload, "chat" if "messages" in payload else "completions")
    return decide(RouteInput(model=model, features=features, **kw), list(backends), policy)


CASES: list[tuple[str, dict[str, Any], str, set[str]]] = [
    ("chit-chat", user("Hi! How was your weekend?"), "diffusion", {"default"}),
    (
        "summary",
        user("Summarise this paragraph in one line: the meeting moved to Tuesday."),
        "diffusion",
        {"default"},
    ),
    (
        "tools offered",
        {**user("What's the weather?"), "tools": [TOOL]},
        "autoregressive",
        {"tool-heavy:tools"},
    ),
    (
        "tool_choice required",
        {**user("x"), "tools": [TOOL], "tool_choice": "required"},
        "autoregressive",
        {"tool-heavy:tools", "tool-heavy:tool_choice"},
    ),
    (
        "named tool",
        {**user("x"), "tools": [TOOL], "tool_choice": {"type": "function", "function": {"name": "f"}}},
        "autoregressive",
        {"tool-heavy:tools", "tool-heavy:tool_choice"},
    ),
    (
        "agent loop",
        {
            "messages": [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "1", "content": "42"},
            ]
        },
        "autoregressive",
        {"tool-heavy:agent-loop"},
    ),
    (
        "chit-chat after a finished tool exchange",
        {
            "messages": [
                {"role": "user", "content": "weather?"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "1", "content": "18 C"},
                {"role": "assistant", "content": "It is 18 C in Paris."},
                {"role": "user", "content": "Thanks! Have a nice day."},
            ]
        },
        "diffusion",
        {"default"},
    ),
    ("code block", user("Why does this fail?\n```python\nprint(x)\n```"), "autoregressive", {"hard:code"}),
    (
        "stack trace",
        user("Traceback (most recent call last):\n  File \"a.py\"\nKeyError: 'x'"),
        "autoregressive",
        {"hard:code"},
    ),
    ("signature", user("what does def merge(a, b): return a do"), "autoregressive", {"hard:code"}),
    (
        "inline snippet",
        user("What does `df.groupby('city')['sales'].transform('mean')` return?"),
        "autoregressive",
        {"hard:code"},
    ),
    ("inline command", user("Is `ls -la` safe to run?"), "autoregressive", {"hard:code"}),
    # A backticked plain word is emphasis, not code.
    ("backticked word", user("Is `serendipity` a nice word?"), "diffusion", {"default"}),
    (
        "thinking on",
        {**user("hi"), "chat_template_kwargs": {"enable_thinking": True}},
        "autoregressive",
        {"hard:thinking"},
    ),
    ("reasoning_effort", {**user("hi"), "reasoning_effort": "high"}, "autoregressive", {"hard:thinking"}),
    (
        "thinking off",
        {**user("hi"), "chat_template_kwargs": {"enable_thinking": False}},
        "diffusion",
        {"default"},
    ),
    (
        "json schema",
        {**user("hi"), "response_format": {"type": "json_schema", "json_schema": {}}},
        "autoregressive",
        {"incompatible:structured_output"},
    ),
    ("logprobs", {**user("hi"), "logprobs": True}, "autoregressive", {"incompatible:logprobs"}),
    ("seed", {**user("hi"), "seed": 3}, "autoregressive", {"incompatible:seed"}),
    ("logit_bias", {**user("hi"), "logit_bias": {"1": 1}}, "autoregressive", {"incompatible:logit_bias"}),
    ("min_p", {**user("hi"), "min_p": 0.1}, "autoregressive", {"incompatible:min_p"}),
    ("min_tokens", {**user("hi"), "min_tokens": 3}, "autoregressive", {"incompatible:min_tokens"}),
    ("bad_words", {**user("hi"), "bad_words": ["x"]}, "autoregressive", {"incompatible:bad_words"}),
    (
        "allowed_token_ids",
        {**user("hi"), "allowed_token_ids": [1]},
        "autoregressive",
        {"incompatible:allowed_token_ids"},
    ),
    (
        "image",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "what is this"},
                        {"type": "image_url", "image_url": {"url": "x"}},
                    ],
                }
            ]
        },
        "autoregressive",
        {"incompatible:image"},
    ),
    (
        "temperature adapted",
        {**user("hi"), "temperature": 0.2},
        "diffusion",
        {"default", "adapted:temperature"},
    ),
    ("temperature 1.0", {**user("hi"), "temperature": 1.0}, "diffusion", {"default"}),
    ("completions prompt", {"prompt": "Once upon a time"}, "diffusion", {"default"}),
]


CODE_LINES = [
    "#include <stdio.h>",
    "const f = (a) => { return a }",
    "Traceback (most recent call last):",
    'Exception in thread "main"',
    "thread 'main' panicked at src/main.rs",
    "def merge(a, b):",
    "function add (a, b) {",
    "fn main() {",
    "public static void main(String[] args)",
    "const handler = (event)",
    "import numpy as np",
    "from collections import Counter",
    "import { useState } from 'react';",
    "import java.util.List;",
    'import "fmt"',
    "  at com.acme.Shop.pay(Shop.java:42)",
    "error[E0382]: borrow of moved value",
    "Segmentation fault (core dumped)",
    "getting a segmentation fault as soon as I call the C extension",
    "it segfaults on exit",
    "Aborted (core dumped)",
    "TypeError: x is not a function",
    "ValueError: bad value",
    "java.lang.NullPointerException",
    "class Shop(Base):",
    "df.groupby('city')['sales'].mean()",
    "git rebase -i HEAD~3",
    "cp ${SRC} $(pwd)/out",
    "for f in *.png; do convert $f $f.jpg; done",
    "if [ -f x ]; then echo y; fi",
    "chmod -R 755 /srv && chown -R www /srv",
    "x = [i * i for i in range(10)]",
    "cfg = {'debug': True}",
    "let v: Vec<_> = it.collect();",
    "let mut total = 0;",
]


@pytest.mark.parametrize("line", CODE_LINES)
def test_each_code_pattern_is_found_in_prose(line: str) -> None:
    """Every pattern of features._CODE_PATTERNS, behind its anchor and its group's gate."""
    prose = "I pasted this from the logs at work, can you tell me what it means (if anything)?"
    assert _has_code(f"{prose}\n{line}\n{prose}")


def test_sql_is_a_select_with_a_from_within_a_statements_length() -> None:
    assert _has_code("Why is this slow? SELECT name FROM users")
    # The FROM 300 characters after the SELECT, and one past.
    assert _has_code(f"Why? SELECT {'a' * 293} FROM t")  # noqa: S608  # a prompt, not a query
    assert not _has_code(f"Why? SELECT {'a' * 294} FROM t")  # noqa: S608
    assert not _has_code("FROM the start we SELECT the best")  # a FROM before the SELECT does not count
    assert not _has_code("Please select one from the list")  # the keywords in capitals only


@pytest.mark.parametrize(
    "text",
    [
        "We met at the cafe (the one at 5th Avenue) and had a class discussion about imports.",
        "The undefined function of a public office is to define what we import and export.",
        "How do I import a car from Japan?",
        "import my contacts from gmail into my phone",
        "Our nightly import job got slower after the upgrade.",
        "See e.g. Smith et al. (2020) and www.example.com (the site); then we left, Tom & Jerry.",
        "Not sure; do you know if it costs $5 or ~5 euros? Let me know = great.",
        "Her class of 1999 had a reunion; the error was mine. No exception, no Segmentation.",
    ],
)
def test_prose_with_the_anchor_words_is_not_code(text: str) -> None:
    assert not _has_code(text)


@pytest.mark.parametrize(("name", "payload", "backend", "reasons"), CASES, ids=[c[0] for c in CASES])
def test_default_policy(name, payload, backend, reasons):
    decision = route(payload)
    assert decision.candidates[0] == backend
    assert set(decision.reasons) == reasons


def test_incompatible_requests_never_fall_back_to_diffusion():
    assert route({**user("hi"), "seed": 1}).candidates == ("autoregressive",)
    assert route({**user("Why?\n```python\nprint(x)\n```")}).candidates == ("autoregressive", "diffusion")
    no_fallback = RoutingSettings(fallback_to_diffusion=False)
    assert route(user("Why?\n```python\nprint(x)\n```"), policy=no_fallback).candidates == ("autoregressive",)


def test_temperature_can_be_routed_instead_of_adapted():
    decision = route({**user("hi"), "temperature": 0.3}, policy=RoutingSettings(temperature="route"))
    assert decision.candidates == ("autoregressive",) and "incompatible:temperature" in decision.reasons
    assert not decision.drop_temperature
    assert route({**user("hi"), "temperature": 0.3}).drop_temperature


@pytest.mark.parametrize(
    ("kw", "backend", "reason"),
    [
        ({"model": "g4"}, "autoregressive", "explicit:model"),
        ({"model": "diffusion"}, "diffusion", "explicit:model"),
        ({"model": "fast"}, "diffusion", "explicit:alias"),
        ({"model": "quality"}, "autoregressive", "explicit:alias"),
        ({"header_route": "quality"}, "autoregressive", "explicit:header"),
        ({"header_route": "diffusion", "model": "g4"}, "diffusion", "explicit:header"),
    ],
)
def test_explicit_choices_win_without_fallback(kw, backend, reason):
    decision = route(user("Why?\n```python\nprint(x)\n```"), **kw)  # hard by policy, but explicit wins
    assert decision.candidates == (backend,) and decision.reasons[0] == reason


def test_explicit_errors():
    with pytest.raises(NotFound):
        route(user("hi"), model="gpt-17")
    with pytest.raises(InvalidRequest):
        route(user("hi"), header_route="nowhere")
    with pytest.raises(InvalidRequest, match="image"):
        route(
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
            model="diffusion",
        )
    with pytest.raises(PermissionDenied):
        route(user("hi"), header_route="quality", may_override=False)
    assert route(user("hi"), model="g4", may_override=False).candidates == ("autoregressive",)


def test_principal_backend_restrictions():
    assert route(
        user("Why?\n```python\nprint(x)\n```"), allowed_backends=frozenset({"diffusion"})
    ).candidates == ("diffusion",)
    with pytest.raises(PermissionDenied):
        route({**user("hi"), "seed": 1}, allowed_backends=frozenset({"diffusion"}))
    with pytest.raises(PermissionDenied):
        route(user("hi"), model="g4", allowed_backends=frozenset({"diffusion"}))


def test_operator_rules_run_first():
    policy = RoutingSettings.model_validate(
        {
            "rules": [
                {"name": "bots-fast", "when": {"principals": ["telegram"]}, "backend": "diffusion"},
                {"name": "long-chats", "when": {"min_messages": 3}, "backend": "autoregressive"},
            ]
        }
    )
    decision = route(user("Why?\n```python\nprint(x)\n```"), policy=policy, principal="telegram")
    assert decision.candidates[0] == "diffusion" and decision.reasons == ("rule:bots-fast",)
    long = {"messages": [{"role": "user", "content": "hi"}] * 3}
    assert route(long, policy=policy).reasons == ("rule:long-chats",)
    assert route(user("hi"), policy=policy).reasons == ("default",)


def test_unavailable_backend_goes_last():
    down = BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=4, available=False)
    decision = route(user("hi"), backends=(down, A))
    assert decision.candidates == ("autoregressive", "diffusion")
    assert "unavailable:diffusion" in decision.reasons


@pytest.mark.parametrize(
    ("in_flight", "ar_latency", "expected"),
    [
        (3, 2.9, "diffusion"),  # a free slot
        (4, 2.9, "diffusion"),  # full, but waiting one batch (1.1 s) still beats the AR backend (2.9 s)
        (12, 2.9, "autoregressive"),  # 9 ahead: ~3.2 s > 2.9 s
        (12, 10.0, "diffusion"),  # the AR backend is slower still
    ],
)
def test_spillover_compares_the_wait_with_the_other_backend(in_flight, ar_latency, expected):
    d = BackendView(
        name="diffusion",
        kind="diffusion",
        model="dg",
        max_concurrency=4,
        in_flight=in_flight,
        expected_latency=0.9,
    )
    a = BackendView(
        name="autoregressive",
        kind="autoregressive",
        model="g4",
        max_concurrency=256,
        expected_latency=ar_latency,
    )
    decision = route(user("hi"), backends=(d, a))
    assert decision.candidates[0] == expected
    assert ("spillover" in decision.reasons) == (expected == "autoregressive")


def test_spillover_queue_mode():
    d = BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=4, in_flight=40)
    decision = route(user("hi"), backends=(d, A), policy=RoutingSettings(spillover={"mode": "queue"}))
    assert decision.candidates[0] == "diffusion" and decision.queue and "queued" in decision.reasons
    off = route(user("hi"), backends=(d, A), policy=RoutingSettings(spillover={"mode": "off"}))
    assert off.candidates[0] == "diffusion" and not off.queue


def test_single_backend_configurations():
    assert route(user("Why?\n```python\nprint(x)\n```"), backends=(D,)).candidates == ("diffusion",)
    assert route(user("hi"), backends=(A,)).candidates == ("autoregressive",)


def test_long_history_only_scans_the_newest_user_turn_with_regexes():
    history = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "prove the theorem " * 50}
        for i in range(200)
    ]
    history.append({"role": "user", "content": "thanks, bye!"})
    decision = route({"messages": history})
    assert decision.reasons == ("default",)


FENCED = "Here is the code:\n```python\ndef merge(a, b):\n    return a + b\n```"


@pytest.mark.parametrize(
    ("earlier", "code"),
    [
        ([{"role": "system", "content": FENCED}], False),  # a system prompt's example, not the request
        ([{"role": "developer", "content": FENCED}], False),
        ([{"role": "user", "content": FENCED}, {"role": "assistant", "content": "Done."}], False),
        ([{"role": "user", "content": "merge?"}, {"role": "assistant", "content": FENCED}], True),
    ],
)
def test_code_in_the_history_counts_only_in_an_assistants_fence(earlier, code):
    """The code patterns read the newest user turn alone: code in a system prompt or an earlier user turn
    leaves a chit-chat follow-up free to go to diffusion, while a fenced answer being discussed does not."""
    payload = {"messages": [*earlier, {"role": "user", "content": "Thanks, that was helpful!"}]}
    features = extract_features(payload, "chat")
    assert features.code is code
    assert ("hard:code" in route(payload).reasons) is code


def test_code_in_a_text_part_of_the_newest_turn_counts():
    parts = [{"type": "text", "text": "Why does this fail?"}, {"type": "text", "text": FENCED}]
    assert extract_features({"messages": [{"role": "user", "content": parts}]}, "chat").code
    prose = [{"type": "text", "text": "Why?"}, {"type": "input_audio", "input_audio": {"data": FENCED}}]
    assert not extract_features({"messages": [{"role": "user", "content": prose}]}, "chat").code


# Each condition of a rule's `when`, at its boundary: (when, features that match, features that do not).
_BASE = RequestFeatures(endpoint="chat", messages=3, prompt_chars=100, difficulty=Difficulty(score=0.4))
WHEN: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ({"endpoint": "chat"}, {}, {"endpoint": "completions"}),
    ({"has_tools": True}, {"has_tools": True}, {}),
    ({"has_tools": False}, {}, {"has_tools": True}),
    ({"code": True}, {"code": True}, {}),
    ({"thinking": True}, {"thinking": True}, {}),
    ({"hard": True}, {"difficulty": Difficulty(score=0.5)}, {"difficulty": Difficulty(score=0.49)}),
    ({"hard": False}, {"difficulty": Difficulty(score=0.49)}, {"difficulty": Difficulty(score=0.5)}),
    ({"hard": False}, {"difficulty": None}, {"difficulty": Difficulty(score=0.9)}),
    ({"min_score": 0.4}, {}, {"difficulty": Difficulty(score=0.39)}),
    ({"min_score": 0.1}, {}, {"difficulty": None}),
    ({"max_score": 0.4}, {}, {"difficulty": Difficulty(score=0.41)}),
    ({"max_score": 0.9}, {}, {"difficulty": None}),
    ({"min_messages": 3}, {}, {"messages": 2}),
    ({"max_messages": 3}, {}, {"messages": 4}),
    ({"min_prompt_chars": 100}, {}, {"prompt_chars": 99}),
    ({"max_prompt_chars": 100}, {}, {"prompt_chars": 101}),
]


@pytest.mark.parametrize(("when", "matching", "other"), WHEN)
def test_each_rule_condition_at_its_boundary(when, matching, other):
    policy = RoutingSettings.model_validate(
        {"rules": [{"name": "r", "when": when, "backend": "autoregressive"}]}
    )

    def reasons(changes: dict[str, Any]) -> tuple[str, ...]:
        features = dataclasses.replace(_BASE, **changes)
        return decide(RouteInput(model="auto", features=features, threshold=0.5), [D, A], policy).reasons

    assert reasons(matching) == ("rule:r",)
    assert "rule:r" not in reasons(other)


def test_a_rule_matches_only_its_principals():
    policy = RoutingSettings.model_validate(
        {"rules": [{"name": "r", "when": {"principals": ["bot"]}, "backend": "autoregressive"}]}
    )
    for principal, matched in (("bot", True), ("alice", False)):
        decision = decide(RouteInput(model="auto", features=_BASE, principal=principal), [D, A], policy)
        assert (decision.reasons == ("rule:r",)) is matched


def test_explicit_errors_carry_their_codes():
    with pytest.raises(PermissionDenied) as denied:
        route(user("hi"), header_route="quality", may_override=False)
    assert denied.value.code == "route_not_allowed"
    image = {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}
    with pytest.raises(InvalidRequest) as crashing:
        route(image, model="diffusion")
    assert crashing.value.code == "unsupported_on_backend"
    chat_only = BackendView(
        name="diffusion", kind="diffusion", model="dg", max_concurrency=4, endpoints=frozenset({"chat"})
    )
    for kw in ({"model": "dg"}, {}):
        with pytest.raises(NotFound) as unserved:
            decide(
                RouteInput(features=RequestFeatures(endpoint="responses"), **{"model": "auto", **kw}),
                [chat_only],
                POLICY,
            )
        assert unserved.value.code == "endpoint_not_served" and "diffusion" in unserved.value.message


def test_an_explicit_diffusion_choice_adapts_temperature_only_in_adapt_mode():
    hot = {**user("hi"), "temperature": 0.3}
    adapted = route(hot, model="dg")
    assert adapted.drop_temperature and adapted.reasons == ("explicit:model", "adapted:temperature")
    kept = route(hot, model="dg", policy=RoutingSettings(temperature="route"))
    assert not kept.drop_temperature and kept.reasons == ("explicit:model",)
    assert not route(user("hi"), model="dg").drop_temperature


def test_the_decision_carries_the_verdict_it_was_made_with():
    features = RequestFeatures(endpoint="chat", difficulty=Difficulty(score=0.7))
    for model in ("auto", "dg"):
        decision = decide(RouteInput(model=model, features=features, threshold=0.6), [D, A], POLICY)
        assert decision.score == 0.7 and decision.threshold == 0.6


def test_a_backend_that_does_not_serve_the_api_is_passed_over_with_a_reason():
    chat_only = BackendView(
        name="diffusion", kind="diffusion", model="dg", max_concurrency=4, endpoints=frozenset({"chat"})
    )
    decision = decide(
        RouteInput(model="auto", features=RequestFeatures(endpoint="responses")), [chat_only, A], POLICY
    )
    assert decision.candidates[0] == "autoregressive" and "unserved:diffusion" in decision.reasons


def test_spillover_starts_at_a_full_backend_and_only_to_an_available_one():
    full = BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=1, in_flight=1)
    slow_ar = BackendView(
        name="autoregressive", kind="autoregressive", model="g4", max_concurrency=9, expected_latency=0.1
    )
    assert route(user("hi"), backends=(full, slow_ar)).candidates[0] == "autoregressive"
    free = BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=2, in_flight=1)
    assert route(user("hi"), backends=(free, slow_ar)).candidates[0] == "diffusion"
    down_ar = BackendView(
        name="autoregressive",
        kind="autoregressive",
        model="g4",
        max_concurrency=9,
        expected_latency=0.1,
        available=False,
    )
    assert route(user("hi"), backends=(full, down_ar)).candidates[0] == "diffusion"
