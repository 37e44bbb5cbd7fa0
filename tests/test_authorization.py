"""Authorization decides on the backends that serve a request: a key's or tier's ``models`` and
``backends`` bound every candidate (first choice, fallbacks, spill-over) and every explicit choice, on
every API and in the dry run, whatever the request's ``model`` says."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.datastructures import Headers

from gateway.auth.principal import Principal
from gateway.permissions import Access, resolve_access
from gateway.proxy.body import parse_request
from gateway.proxy.planning import plan_route
from gateway.routing import BackendView
from tests.support import AR_MODEL, DIFFUSION_MODEL, gateway_settings, write_key

D, A = "diffusion", "autoregressive"
BOTH = frozenset({D, A})
EASY = "Hi! How was your weekend?"
HARD = (
    "Alice, Bob and Claire each hold a hat: red, blue, green. Alice swaps with Bob, then Claire swaps "
    "with Alice, then Bob swaps with Claire. Which hat does Bob hold now?"
)
PATHS = {
    "chat": "/v1/chat/completions",
    "completions": "/v1/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
}
TIERS = {"diffusion-models": {"models": ["auto", D]}, "diffusion-backends": {"backends": [D]}}


@dataclass(frozen=True)
class Key:
    """A key's record fields, and what it should be able to reach."""

    name: str
    fields: dict[str, Any]
    serves: frozenset[str]  # the backends that may serve it
    auto: bool = True  # may ask for auto
    named: bool = True  # may choose a backend itself


KEYS = [
    Key("open", {}, BOTH),
    Key("models-name", {"models": [D]}, frozenset({D}), auto=False),
    Key("models-id", {"models": [DIFFUSION_MODEL]}, frozenset({D}), auto=False),
    Key("models-auto", {"models": ["auto", D]}, frozenset({D})),
    Key("backends", {"backends": [D]}, frozenset({D})),
    Key("tier-models", {"tier": "diffusion-models"}, frozenset({D})),
    Key("tier-backends", {"tier": "diffusion-backends"}, frozenset({D})),
    Key("ar-models", {"models": ["auto", AR_MODEL]}, frozenset({A})),
    # The key's own models cannot reach past its tier's backends.
    Key("models-past-tier", {"tier": "diffusion-backends", "models": ["auto", AR_MODEL]}, frozenset()),
    # Automatic routing only: auto goes anywhere, no backend may be named.
    Key("auto-only", {"models": ["auto"]}, BOTH, named=False),
]


@dataclass(frozen=True)
class Choice:
    """One way of choosing a backend: the request's model and x-gateway-route header."""

    name: str
    model: str
    header: str | None = None
    target: str | None = None  # the backend chosen explicitly; None: auto
    text: str = EASY


# Each header choice sends a model naming the other backend: the header decides, and the model string
# must not lend its permission to the header's choice.
CHOICES = [
    Choice("auto-easy", "auto"),
    Choice("auto-hard", "auto", text=HARD),
    Choice("model-diffusion-id", DIFFUSION_MODEL, target=D),
    Choice("model-diffusion-name", D, target=D),
    Choice("model-fast", "fast", target=D),
    Choice("model-ar-id", AR_MODEL, target=A),
    Choice("model-ar-name", A, target=A),
    Choice("model-quality", "quality", target=A),
    Choice("header-ar-name", D, header=A, target=A),
    Choice("header-ar-id", D, header=AR_MODEL, target=A),
    Choice("header-quality", D, header="quality", target=A),
    Choice("header-diffusion-name", AR_MODEL, header=D, target=D),
    Choice("header-diffusion-id", AR_MODEL, header=DIFFUSION_MODEL, target=D),
    Choice("header-fast", AR_MODEL, header="fast", target=D),
]


def expected(key: Key, choice: Choice, dry: bool) -> str:
    """``served:<backend>`` (a dry run: ``served:<every candidate>``) or ``<status>:<code>``."""
    if choice.target is not None:
        allowed = key.named and choice.target in key.serves
        return f"served:{choice.target}" if allowed else "403:model_not_allowed"
    if not key.auto or not key.serves:
        return "403:model_not_allowed"
    # The policy's order (easy: diffusion first; hard: autoregressive first), kept to what the key may use.
    order = [D, A] if choice.text == EASY else [A, D]
    candidates = [b for b in order if b in key.serves]
    return "served:" + ",".join(candidates if dry else candidates[:1])


def body(api: str, model: str, text: str) -> dict[str, Any]:
    if api == "chat":
        return {"model": model, "messages": [{"role": "user", "content": text}]}
    if api == "completions":
        return {"model": model, "prompt": text, "max_tokens": 16}
    if api == "responses":
        return {"model": model, "input": text}
    return {"model": model, "max_tokens": 16, "messages": [{"role": "user", "content": text}]}


def auth_headers(api: str, key: str, route: str | None) -> dict[str, str]:
    h = {"x-api-key": key, "anthropic-version": "2023-06-01"} if api == "messages" else {}
    if api != "messages":
        h["authorization"] = f"Bearer {key}"
    if route is not None:
        h["x-gateway-route"] = route
    return h


def outcome(r: httpx.Response, dry: bool) -> str:
    if r.status_code == 200:
        return "served:" + (",".join(r.json()["candidates"]) if dry else r.headers["x-gateway-backend"])
    return f"{r.status_code}:{r.json()['error']['code']}"


def start(make_gateway: Any, tmp_path: Path) -> tuple[Any, dict[str, str]]:
    """A gateway with the keys above (written before it starts) and the tiers they name."""
    keys_file = tmp_path / "keys.yaml"
    secrets = {k.name: write_key(keys_file, k.name, **k.fields) for k in KEYS}
    gw = make_gateway(auth={"keys_file": str(keys_file), "tiers": TIERS})
    return gw, secrets


@pytest.mark.parametrize("dry", [False, True], ids=["live", "dry-run"])
@pytest.mark.parametrize("api", sorted(PATHS))
def test_every_way_of_choosing_a_backend_stays_within_the_keys_permission(
    make_gateway: Any, tmp_path: Path, api: str, dry: bool
) -> None:
    gw, secrets = start(make_gateway, tmp_path)
    url = gw.url + (f"/v1/gateway/route?api={api}" if dry else PATHS[api])
    seen: dict[tuple[str, str], str] = {}
    want: dict[tuple[str, str], str] = {}
    with httpx.Client(timeout=10) as client:
        for key in KEYS:
            for choice in CHOICES:
                r = client.post(
                    url,
                    json=body(api, choice.model, choice.text),
                    headers=auth_headers(api, secrets[key.name], choice.header),
                )
                seen[key.name, choice.name] = outcome(r, dry)
                want[key.name, choice.name] = expected(key, choice, dry)
    assert seen == want


def test_the_model_list_shows_what_a_key_may_ask_for(make_gateway: Any, tmp_path: Path) -> None:
    gw, secrets = start(make_gateway, tmp_path)
    ids = {D: DIFFUSION_MODEL, A: AR_MODEL}
    with httpx.Client(timeout=10) as client:
        for key in KEYS:
            listed = client.get(
                gw.base_url + "/models", headers={"authorization": f"Bearer {secrets[key.name]}"}
            )
            assert listed.status_code == 200
            want = (["auto"] if key.auto and key.serves else []) + [
                ids[b] for b in (D, A) if key.named and b in key.serves
            ]
            assert [m["id"] for m in listed.json()["data"]] == want, key.name


def test_a_failed_backend_falls_back_only_to_one_the_key_may_use(make_gateway: Any, tmp_path: Path) -> None:
    gw, secrets = start(make_gateway, tmp_path)
    fault = {"x-sim-fault-diffusion": "status=500"}
    with httpx.Client(timeout=10) as client:
        for name, fallback in (("open", True), ("models-auto", False), ("tier-models", False)):
            r = client.post(
                gw.base_url + "/chat/completions",
                json=body("chat", "auto", EASY),
                headers={"authorization": f"Bearer {secrets[name]}", **fault},
            )
            if fallback:  # the control: the failure does fall back when the key may use the other backend
                assert r.status_code == 200 and r.headers["x-gateway-fallback"].startswith("diffusion>"), name
            else:
                assert r.status_code >= 500 and "x-gateway-fallback" not in r.headers, name
                assert r.headers["x-gateway-backend"] == D and r.json()["error"], name


def test_spillover_stays_among_the_backends_a_key_may_use() -> None:
    settings = gateway_settings("http://127.0.0.1:9", "http://127.0.0.1:9", auth={"allow_anonymous": True})
    full = BackendView(name=D, kind="diffusion", model=DIFFUSION_MODEL, max_concurrency=1, in_flight=5)
    views = [full, BackendView(name=A, kind="autoregressive", model=AR_MODEL, max_concurrency=256)]
    parsed = parse_request(
        orjson.dumps(body("chat", "auto", EASY)), "chat", max_n=settings.server.max_n, max_output_tokens=None
    )

    def plan(**permission: frozenset[str]) -> tuple[str, ...]:
        principal = Principal(name="k", kind="key", **permission)
        decision, _ = plan_route(settings, views, parsed, Headers({}), principal, None)
        return decision.candidates

    assert plan() == (A, D)  # the control: a full diffusion backend spills over to autoregressive
    assert plan(models=frozenset({"auto", D})) == (D,)
    assert plan(models=frozenset({"auto", DIFFUSION_MODEL})) == (D,)
    assert plan(backends=frozenset({D})) == (D,)


CATALOG = [(D, DIFFUSION_MODEL), (A, AR_MODEL)]


@pytest.mark.parametrize(
    ("models", "backends", "access"),
    [
        (None, None, Access(None, auto=True, named=True)),
        ({"auto"}, None, Access(None, auto=True, named=False)),
        ({"auto"}, {D}, Access(frozenset({D}), auto=True, named=False)),
        ({D}, None, Access(frozenset({D}), auto=False, named=True)),
        ({"auto", AR_MODEL}, None, Access(frozenset({A}), auto=True, named=True)),
        ({"auto", AR_MODEL}, {D}, Access(frozenset(), auto=True, named=True)),
        # An entry that names no configured backend grants nothing: it does not widen to "any".
        ({"auto", "retired-model"}, None, Access(frozenset(), auto=True, named=True)),
        ({"fast"}, None, Access(frozenset(), auto=False, named=True)),
        (set(), None, Access(frozenset(), auto=False, named=True)),
    ],
)
def test_permissions_resolve_to_one_set_of_backends(
    models: set[str] | None, backends: set[str] | None, access: Access
) -> None:
    assert resolve_access(models, backends, CATALOG) == access
