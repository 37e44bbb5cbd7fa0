"""What a request may spend, as the gateway estimates it before sending it, and what an answer cut short is
charged (gateway/proxy/cost.py)."""

from __future__ import annotations

from typing import Any

import orjson

from gateway.proxy.body import parse_request
from gateway.proxy.cost import RequestCost, charge_cut_short, estimate_prompt_tokens
from gateway.proxy.dialects import Endpoint
from gateway.record import DiffusionRun, RequestRecord, Usage


def _cost(body: dict[str, Any], endpoint: Endpoint = "chat") -> RequestCost:
    return RequestCost(parse_request(orjson.dumps(body), endpoint, max_n=8, max_output_tokens=None))


def _record(**fields: Any) -> RequestRecord:
    record = RequestRecord(request_id="r", method="POST", path="/v1/chat/completions", started=0)
    for name, value in fields.items():
        setattr(record, name, value)
    return record


def test_the_prompt_is_estimated_from_its_text_not_from_inline_media():
    text = [{"role": "user", "content": "x" * 400}]
    image = "data:image/png;base64," + "A" * 1_000_000
    with_image = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "x" * 400},
                {"type": "image_url", "image_url": {"url": image}},
            ],
        }
    ]
    assert estimate_prompt_tokens({"messages": text}) == 3 + 4 + 101  # 404 bytes: "user" and the text
    assert estimate_prompt_tokens({"messages": with_image}) < 1000  # not a quarter of a megabyte
    # Three bytes a character in UTF-8: a character each, nearer what tokenizers give than a quarter.
    assert estimate_prompt_tokens({"prompt": "語" * 400}) == 3 + 300


def test_a_body_nested_as_deep_as_json_parses_is_estimated_without_recursion():
    deep = orjson.loads("[" * 1000 + '"deep"' + "]" * 1000)  # beyond Python's recursion limit
    assert estimate_prompt_tokens({"messages": [{"role": "user", "content": deep}]}) > 0


def test_every_sequence_asked_for_is_reserved_at_the_largest_output_limit_given():
    chat = _cost(
        {
            "model": "auto",
            "messages": [{"role": "user", "content": "hi"}],
            "n": 3,
            "max_tokens": 50,
            "max_completion_tokens": 80,
        }
    )
    assert (chat.max_tokens, chat.sequences, chat.completion_cap) == (80, 3, 240)
    batch = _cost({"model": "auto", "prompt": ["a", "b"], "n": 2}, "completions")
    assert (batch.max_tokens, batch.sequences, batch.completion_cap) == (None, 4, None)
    tokenized = _cost({"model": "auto", "prompt": [101, 102, 103]}, "completions")
    assert tokenized.sequences == 1 and tokenized.prompt == 3 + 3  # a token per id
    responses = _cost({"model": "auto", "input": "hi", "max_output_tokens": 70}, "responses")
    assert responses.max_tokens == 70


def test_a_stream_cut_short_is_charged_the_estimate_and_at_most_what_it_asked_for():
    cost = _cost({"model": "auto", "messages": [{"role": "user", "content": "x" * 40}], "max_tokens": 100})
    # Diffusion: three canvas events after the role's would be 768 tokens; the request asked for 100.
    record = _record(relayed_events=4, diffusion=DiffusionRun("entropy_bound", 0.1, 256, 48))
    charge_cut_short(record, cost)
    assert record.usage == Usage(cost.prompt, 100, 0) and record.usage_estimated


def test_a_backend_count_that_came_is_kept():
    cost = _cost({"model": "auto", "messages": [{"role": "user", "content": "hi"}]})
    # Anthropic's message_start carries the prompt's count: kept, with the tokens relayed since.
    started = _record(relayed_events=8, usage=Usage(prompt_tokens=900, completion_tokens=1))
    charge_cut_short(started, cost)
    assert started.usage == Usage(900, 7, 0) and started.usage_estimated
    # The whole count (its usage event came before the hang-up): nothing to estimate.
    whole = _record(relayed_events=8, usage=Usage(prompt_tokens=900, completion_tokens=7))
    charge_cut_short(whole, cost)
    assert whole.usage == Usage(900, 7, 0) and not whole.usage_estimated
