"""Deeply nested request JSON: a clear 400 on every API and on the dry run, before any serialiser sees it.

orjson reads up to 1,024 levels but writes only 255: a body nested between the two got a 500 when the
gateway wrote it back out for the backend. The gateway now refuses nesting past ``server.max_json_depth``
(64) as it parses, so whatever it accepts it can also write.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from gateway.errors import InvalidRequest
from gateway.proxy.body import DEFAULT_MAX_JSON_DEPTH, parse_request, upstream_body
from tests.support import AR_MODEL

BODIES: dict[str, dict[str, Any]] = {
    "chat/completions": {"model": AR_MODEL, "messages": [{"role": "user", "content": "hi"}]},
    "completions": {"model": AR_MODEL, "prompt": "hi"},
    "responses": {"model": AR_MODEL, "input": "hi"},
    "messages": {"model": AR_MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]},
}


DEEP = "<deep>"


def with_deep(body: dict[str, Any], arrays: int) -> bytes:
    """``body`` as JSON with its ``DEEP`` placeholder replaced by ``arrays`` nested arrays: written by
    hand, as no JSON library writes 1,000 levels."""
    return orjson.dumps(body).replace(orjson.dumps(DEEP), b"[" * arrays + b'"deep"' + b"]" * arrays)


def body_with(depth: int) -> bytes:
    """A chat body whose deepest value is ``depth`` levels down, the top-level object included."""
    return with_deep({**BODIES["chat/completions"], "x": DEEP}, depth - 1)


def test_the_depth_limit_is_exact_and_an_accepted_body_can_be_written():
    deepest = parse_request(body_with(DEFAULT_MAX_JSON_DEPTH), "chat", max_n=8, max_output_tokens=None)
    assert upstream_body(deepest, "m")  # written back out, as the backend gets it
    with pytest.raises(InvalidRequest) as info:
        parse_request(body_with(DEFAULT_MAX_JSON_DEPTH + 1), "chat", max_n=8, max_output_tokens=None)
    assert info.value.code == "json_too_deep" and info.value.status == 400
    with pytest.raises(InvalidRequest):
        parse_request(body_with(10), "chat", max_n=8, max_output_tokens=None, max_depth=9)
    # Objects count as arrays do, in any field.
    levels = DEFAULT_MAX_JSON_DEPTH
    body = b'{"model": "m", "prompt": "p", "metadata": ' + b'{"k": ' * levels + b"1" + b"}" * levels + b"}"
    with pytest.raises(InvalidRequest):
        parse_request(body, "completions", max_n=8, max_output_tokens=None)


@pytest.mark.parametrize("depth", [65, 300, 1000])
def test_deep_json_is_a_400_on_every_api_and_the_dry_run(gateway, depth):
    headers = {"authorization": f"Bearer {gateway.key}"}
    targets = [(path, body, "") for path, body in BODIES.items()]
    targets += [("gateway/route", BODIES["chat/completions"], ""), ("gateway/route", BODIES["responses"], "")]
    targets.append(("gateway/route", BODIES["messages"], "?api=messages"))
    for path, body, query in targets:
        # Deep in a field the gateway passes through untouched, and deep in the conversation itself.
        for deep in ({**body, "vllm_xargs": {"x": DEEP}}, {**body, "metadata": DEEP}):
            r = httpx.post(
                f"{gateway.base_url}/{path}{query}",
                content=with_deep(deep, depth),
                headers={**headers, "content-type": "application/json"},
                timeout=10,
            )
            assert r.status_code == 400, (path, r.status_code, r.text[:200])
            error = r.json()["error"]
            assert error["code"] == "json_too_deep" and error["type"] == "invalid_request_error", path


def test_the_limit_is_configurable(make_gateway):
    gw = make_gateway(server={"max_json_depth": 8})
    headers = {"authorization": f"Bearer {gw.key}"}
    body = {**BODIES["chat/completions"], "vllm_xargs": {"x": DEEP}}
    route = gw.base_url + "/gateway/route"
    assert httpx.post(route, content=with_deep(body, 6), headers=headers).status_code == 200  # 8 levels
    r = httpx.post(route, content=with_deep(body, 7), headers=headers)
    assert r.status_code == 400 and r.json()["error"]["code"] == "json_too_deep"
