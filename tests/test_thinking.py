"""Thinking control: per-key / per-tier defaults for enable_thinking, overrides, and stripped reasoning."""

from __future__ import annotations

import httpx
import orjson
import pytest

from gateway.auth.principal import Principal
from gateway.proxy.thinking import apply_thinking, strip_reasoning_body, strip_reasoning_event
from tests.support import AR_MODEL, reasons, wait_for, write_key

CHAT = [{"role": "user", "content": "Hi!"}]


@pytest.mark.parametrize(
    ("default", "override", "asked", "expected"),
    [
        (None, True, None, None),  # no policy: the server's default
        (False, True, None, False),  # the key's default fills in
        (False, True, True, True),  # the request may override
        (False, False, True, False),  # ... unless the key forbids it
        (True, False, False, True),
    ],
)
def test_apply_thinking(default, override, asked, expected):
    payload: dict = {"messages": CHAT, "chat_template_kwargs": {"other": 1}}
    if asked is not None:
        payload["chat_template_kwargs"]["enable_thinking"] = asked
    apply_thinking(payload, Principal(name="k", kind="key", thinking=default, thinking_override=override))
    assert payload["chat_template_kwargs"].get("enable_thinking") == expected
    assert payload["chat_template_kwargs"]["other"] == 1


def test_strip_reasoning_leaves_everything_else():
    body = {
        "choices": [{"message": {"role": "assistant", "content": "4", "reasoning": "2+2..."}}],
        "usage": {},
    }
    stripped = orjson.loads(strip_reasoning_body(orjson.dumps(body)))
    assert stripped["choices"][0]["message"] == {"role": "assistant", "content": "4"}
    plain = orjson.dumps({"choices": [{"message": {"content": "hi"}}]})
    assert strip_reasoning_body(plain) is plain
    event = b'data: {"choices":[{"delta":{"reasoning":"hmm","content":"x"}}]}\n\n'
    assert orjson.loads(strip_reasoning_event(event)[6:])["choices"][0]["delta"] == {"content": "x"}
    assert strip_reasoning_event(b"data: [DONE]\n\n") == b"data: [DONE]\n\n"


def post(gw, key, body):
    return httpx.post(
        gw.base_url + "/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}
    )


def test_key_defaults_and_overrides_end_to_end(make_gateway, diffusion_sim):
    gw = make_gateway()
    quiet = write_key(gw.keys_file, "quiet", thinking=False, thinking_override=False)
    assert wait_for(lambda: post(gw, quiet, {"model": AR_MODEL, "messages": CHAT}).status_code == 200)
    r = post(
        gw, quiet, {"model": "auto", "messages": CHAT, "chat_template_kwargs": {"enable_thinking": True}}
    )
    assert reasons(r.headers["x-gateway-route"]) == "default:score"  # thinking forced off: not routed as hard
    assert diffusion_sim.state.last_body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "reasoning_tokens" in str(r.json()["usage"])


@pytest.mark.parametrize("stream", [False, True])
def test_strip_reasoning_end_to_end(make_gateway, stream):
    gw = make_gateway()
    plain = write_key(gw.keys_file, "plain", strip_reasoning=True)
    body = (
        {
            "model": AR_MODEL,
            "messages": CHAT,
            "stream": stream,
            "chat_template_kwargs": {"enable_thinking": True},
            "stream_options": {"include_usage": True},
        }
        if stream
        else {"model": AR_MODEL, "messages": CHAT, "chat_template_kwargs": {"enable_thinking": True}}
    )
    assert wait_for(lambda: post(gw, plain, body).status_code == 200)
    r = post(gw, plain, body)
    assert '"reasoning"' not in r.text
    if stream:
        usage = orjson.loads([e for e in r.text.split("\n\n") if '"usage"' in e][-1][6:])["usage"]
    else:
        usage = r.json()["usage"]
        assert r.json()["choices"][0]["message"]["content"]
    assert usage["completion_tokens_details"]["reasoning_tokens"] > 0  # still counted
    assert wait_for(lambda: gw.metric("gateway_tokens_total", backend="autoregressive", type="reasoning") > 0)


def test_thinking_policy_on_the_responses_api(make_gateway, diffusion_sim, ar_sim):
    gw = make_gateway()
    quiet = write_key(gw.keys_file, "quiet-agent", thinking=False, thinking_override=False)
    free = write_key(gw.keys_file, "free-agent", thinking=False)

    def ask(key: str, **extra: object) -> httpx.Response:
        return httpx.post(
            gw.base_url + "/responses",
            json={"model": "auto", "input": "Hi!", **extra},
            headers={"authorization": f"Bearer {key}"},
        )

    assert wait_for(lambda: ask(quiet).status_code == 200)
    # The key forbids thinking: a reasoning effort does not turn it on, nor route the turn as hard.
    r = ask(quiet, reasoning={"effort": "high"})
    assert reasons(r.headers["x-gateway-route"]) == "default:score"
    assert diffusion_sim.state.last_body["chat_template_kwargs"] == {"enable_thinking": False}
    # A key that lets requests choose: the effort is the request's choice, left alone.
    r = ask(free, reasoning={"effort": "high"})
    assert r.headers["x-gateway-route"] == "hard:thinking"
    assert "chat_template_kwargs" not in ar_sim.state.last_body
    # Without a choice, the key's default applies.
    assert ask(free).status_code == 200
    assert diffusion_sim.state.last_body["chat_template_kwargs"] == {"enable_thinking": False}


def test_explicit_enable_thinking_wins_over_an_effort():
    from gateway.routing import extract_features

    payload = {
        "messages": CHAT,
        "reasoning_effort": "high",
        "chat_template_kwargs": {"enable_thinking": False},
    }
    assert not extract_features(payload, "chat").thinking
    assert extract_features({"messages": CHAT, "reasoning_effort": "high"}, "chat").thinking
