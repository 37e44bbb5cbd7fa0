"""The difficulty scorer in the running gateway: dry run and live request agree for every API, the dry
run explains, keys set their own threshold, the score reaches metrics and logs, a bad model stops
start-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.app import create_app
from gateway.config import ConfigError
from gateway.routing.scorer.settings import ScorerSettings
from tests.support import DIFFUSION_MODEL, gateway_settings, wait_for, write_key

HARD = (
    "Alice, Bob and Claire each hold a hat: red, blue, green. Alice swaps with Bob, then Claire swaps "
    "with Alice, then Bob swaps with Claire. Which hat does Bob hold now?"
)
EASY = "Hi! How was your weekend?"

PATHS = {
    "chat": "/v1/chat/completions",
    "completions": "/v1/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
}


def body(api: str, text: str) -> dict[str, Any]:
    if api == "chat":
        return {"model": "auto", "messages": [{"role": "user", "content": text}]}
    if api == "completions":
        return {"model": "auto", "prompt": text, "max_tokens": 64}
    if api == "responses":
        return {"model": "auto", "input": text, "instructions": "Answer briefly."}
    # Anthropic's Messages API: the system prompt is a top-level field, content is a list of blocks.
    return {
        "model": "auto",
        "max_tokens": 64,
        "system": "Answer briefly.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }


def headers(gw: Any, api: str) -> dict[str, str]:
    if api == "messages":  # as Anthropic's SDK sends them
        return {"x-api-key": gw.key, "anthropic-version": "2023-06-01"}
    return {"authorization": f"Bearer {gw.key}"}


@pytest.mark.parametrize("api", sorted(PATHS))
@pytest.mark.parametrize("text", [HARD, EASY], ids=["hard", "easy"])
def test_the_dry_run_and_the_live_request_agree(gateway: Any, api: str, text: str) -> None:
    h = headers(gateway, api)
    live = httpx.post(gateway.url + PATHS[api], json=body(api, text), headers=h, timeout=10)
    assert live.status_code == 200, live.text
    dry = httpx.post(gateway.base_url + "/gateway/route", json=body(api, text), headers=h, timeout=10)
    assert dry.status_code == 200, dry.text
    explained = dry.json()
    assert explained["reasons"] == live.headers["x-gateway-route"].split(",")
    assert explained["backend"] == live.headers["x-gateway-backend"]
    expected = "autoregressive" if text == HARD else "diffusion"
    assert explained["backend"] == expected
    # The dialect named explicitly gives the same answer as the one inferred.
    named = httpx.post(
        gateway.base_url + f"/gateway/route?api={api}", json=body(api, text), headers=h, timeout=10
    )
    assert named.json()["reasons"] == explained["reasons"]


def test_the_dry_run_names_the_features_that_pushed_the_score(gateway: Any) -> None:
    r = httpx.post(
        gateway.base_url + "/gateway/route",
        json=body("chat", HARD),
        headers={"authorization": f"Bearer {gateway.key}"},
    )
    difficulty = r.json()["difficulty"]
    assert 0.5 < difficulty["score"] <= 1.0 and difficulty["score"] >= difficulty["threshold"]
    top = difficulty["top_features"]
    assert len(top) == 5
    assert all(isinstance(t["feature"], str) and isinstance(t["weight"], float) for t in top)
    assert [abs(t["weight"]) for t in top] == sorted((abs(t["weight"]) for t in top), reverse=True)
    bad = httpx.post(
        gateway.base_url + "/gateway/route?api=smoke-signals",
        json=body("chat", HARD),
        headers={"authorization": f"Bearer {gateway.key}"},
    )
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "api"


def test_a_key_sets_its_own_threshold(make_gateway: Any) -> None:
    gw = make_gateway()

    def score(text: str) -> float:
        r = httpx.post(
            gw.base_url + "/gateway/route",
            json=body("chat", text),
            headers={"authorization": f"Bearer {gw.key}"},
        )
        return float(r.json()["difficulty"]["score"])

    easy, hard = score(EASY), score(HARD)
    # Thresholds just past each score: a quality-minded user's key below the easy score, a speed-minded
    # bot's above the hard one.
    quality = write_key(gw.keys_file, "quality-user", route_threshold=max(1e-6, easy / 2))
    speed = write_key(gw.keys_file, "speed-bot", route_threshold=(hard + 1) / 2)

    def backend(key: str, text: str) -> str | None:
        r = httpx.post(
            gw.base_url + "/chat/completions",
            json=body("chat", text),
            headers={"authorization": f"Bearer {key}"},
            timeout=10,
        )
        return str(r.headers["x-gateway-backend"]) if r.status_code == 200 else None

    # Once the key file has reloaded with both keys (two writes can straddle one reload).
    assert wait_for(lambda: backend(quality, EASY) == "autoregressive")
    assert wait_for(lambda: backend(speed, HARD) == "diffusion")
    assert backend(gw.key, HARD) == "autoregressive"  # the model's own threshold
    assert backend(gw.key, EASY) == "diffusion"


def test_the_score_reaches_metrics_and_the_request_log(gateway: Any, caplog: Any) -> None:
    caplog.set_level("INFO", logger="gateway.request")
    r = httpx.post(
        gateway.base_url + "/chat/completions",
        json=body("chat", HARD),
        headers={"authorization": f"Bearer {gateway.key}"},
        timeout=10,
    )
    score = float(r.headers["x-gateway-route"].split("hard:score=")[1].split(",")[0])
    assert wait_for(lambda: gateway.metric("gateway_route_score_count", backend="autoregressive") == 1)
    assert gateway.metric("gateway_route_score_sum", backend="autoregressive") == pytest.approx(
        score,
        abs=0.006,  # the header shows two decimals
    )
    assert gateway.metric("gateway_route_reasons_total", reason="hard:score") == 1

    def lines() -> list[dict[str, Any]]:
        return [getattr(rec, "fields", {}) for rec in caplog.records if rec.name == "gateway.request"]

    assert wait_for(lambda: any("route_score" in line for line in lines()))
    line = next(line for line in lines() if "route_score" in line)
    assert line["route_score"] == pytest.approx(score, abs=0.006)


def test_a_request_that_names_its_backend_is_not_scored(gateway: Any) -> None:
    """An explicit choice is honoured as given, so its score would decide nothing: the hot path skips
    the scorer (no score in the route header, none observed); the dry run still shows it."""
    auth = {"authorization": f"Bearer {gateway.key}"}
    by_model = {"model": DIFFUSION_MODEL, "messages": [{"role": "user", "content": HARD}]}
    by_header = {**auth, "x-gateway-route": "autoregressive"}
    for payload, h in ((by_model, auth), (body("chat", HARD), by_header)):
        r = httpx.post(gateway.base_url + "/chat/completions", json=payload, headers=h, timeout=10)
        assert r.status_code == 200, r.text
        assert "score" not in r.headers["x-gateway-route"]
        dry = httpx.post(gateway.base_url + "/gateway/route", json=payload, headers=h, timeout=10)
        assert dry.json()["difficulty"]["score"] > dry.json()["difficulty"]["threshold"]
    scored = httpx.post(gateway.base_url + "/chat/completions", json=body("chat", HARD), headers=auth)
    assert "hard:score=" in scored.headers["x-gateway-route"]
    assert wait_for(lambda: gateway.metric("gateway_route_score_count", backend="autoregressive") == 1)
    assert gateway.metric("gateway_route_score_count", backend="diffusion") == 0


def test_a_bad_model_file_stops_start_up(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"\x1f\x8b definitely not a model")
    keys = tmp_path / "keys.yaml"
    write_key(keys, "k")
    settings = gateway_settings(
        "http://127.0.0.1:9",
        "http://127.0.0.1:9",
        auth={"keys_file": str(keys)},
        routing={"scorer": {"model": str(broken)}},
    )
    with pytest.raises(ConfigError, match=r"routing\.scorer\.model: routing model .*broken\.json\.gz"):
        create_app(settings)
    scorer = ScorerSettings(model=str(tmp_path / "no"))
    missing = settings.model_copy(update={"routing": settings.routing.model_copy(update={"scorer": scorer})})
    with pytest.raises(ConfigError, match="cannot read routing model"):
        create_app(missing)


def write_config(tmp_path: Path, extra: str = "") -> Path:
    """A configuration file with a key file and two backends nobody listens on (nothing is sent)."""
    keys = tmp_path / "keys.yaml"
    write_key(keys, "k")
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "backends:\n"
        "  - {name: diffusion, kind: diffusion, url: 'http://127.0.0.1:9', model: dg}\n"
        "  - {name: autoregressive, kind: autoregressive, url: 'http://127.0.0.1:9', model: g4}\n"
        f"auth: {{keys_file: '{keys}'}}\n" + extra
    )
    return config


def test_check_config_reports_a_bad_model(tmp_path: Path) -> None:
    config = write_config(tmp_path, f"routing: {{scorer: {{model: '{tmp_path / 'nope.json.gz'}'}}}}\n")
    result = subprocess.run(
        [sys.executable, "-m", "gateway", "check-config", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "routing.scorer.model: cannot read routing model" in result.stderr
    assert "Traceback" not in result.stderr


def test_gateway_route_shows_the_score_and_its_features(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    request = tmp_path / "req.json"
    request.write_text(json.dumps(body("messages", HARD)))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway",
            "route",
            str(request),
            "--config",
            str(config),
            "--api",
            "messages",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["backend"] == "autoregressive" and out["reasons"][0].startswith("hard:score=")
    assert len(out["difficulty"]["top_features"]) == 5
