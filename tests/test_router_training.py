"""``gateway router train`` and ``gateway router eval``, and the trainer under them: an operator's
retraining loop, the fit against scikit-learn's own, the held-out evaluation, the calibration, the data."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from gateway.cli import main
from gateway.routing.scorer.load import load_model
from gateway.routing.scorer.vector import SHAPE_VALUE
from gateway_training import fit as fit_module
from gateway_training.corpus import (
    CLASSES,
    HARD_CLASSES,
    in_context,
    load_contexts,
    real_examples,
    real_licences,
    written_examples,
)
from gateway_training.data import DataError, builtin_examples, builtin_sources, load_jsonl
from gateway_training.fit import FitSettings, Prediction, calibrate, choose_threshold, vector_of
from gateway_training.sources import Example

EASY = [
    "hi there",
    "thanks a lot!",
    "write a haiku about rain",
    "what's the capital of Peru?",
    "good morning",
]
HARD = [
    "Prove that {n} is not a perfect square.",
    "If Ann is older than Bo and Bo older than Cy, who is youngest of {n} people?",
    "Find the remainder of {n}^100 divided by 7.",
    "How many ways can {n} people sit at a round table?",
]


def write_data(path: Path, n: int = 40, seed: int = 1) -> None:
    """A small labelled file, as an operator would export from their own traffic."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        hard = i % 2 == 0
        text = rng.choice(HARD).format(n=rng.randint(3, 99)) if hard else f"{rng.choice(EASY)} #{i}"
        rows.append({"messages": [{"role": "user", "content": text}], "label": "hard" if hard else "easy"})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_train_is_deterministic_and_eval_lists_what_it_got_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "labelled.jsonl"
    write_data(data)
    first, second = tmp_path / "a.bin.gz", tmp_path / "b.bin.gz"
    card = tmp_path / "card.md"
    for out in (first, second):
        argv = ["router", "train", "--no-builtin", "--data", str(data), "--folds", "4", "--out", str(out)]
        assert main([*argv, "--card", str(card)]) == 0
    assert first.read_bytes() == second.read_bytes()  # seeded, and the file carries no time stamp
    err = capsys.readouterr().err
    assert "fold 4/4" in err and "s left" in err  # progress with the time left
    assert "## Held out" in card.read_text()
    model = load_model(first)
    assert model.meta["examples"] == 40
    assert model.score("Prove that 51 is not a perfect square.").score > model.score("hi there #3").score
    wrong = tmp_path / "wrong.jsonl"  # a hard prompt labelled easy: misrouted by the model's lights
    wrong.write_text(json.dumps({"prompt": "Prove that 77 is not a perfect square.", "label": "easy"}) + "\n")
    assert main(["router", "eval", "--data", str(data), "--data", str(wrong), "--model", str(first)]) == 0
    report = capsys.readouterr().out
    assert "| class | label | n | recall |" in report and "| threshold | hard recall |" in report
    assert "Misrouted (1 shown" in report and "- easy, score " in report and "Prove that 77" in report


def test_a_bad_training_file_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}], "label": "easy"}\n{"label": "meh"}\n')
    assert main(["router", "train", "--no-builtin", "--data", str(data), "--out", str(tmp_path / "m")]) == 2
    assert f"{data}:2: label must be" in capsys.readouterr().err
    with pytest.raises(DataError, match=r"bad\.jsonl:1: not JSON"):
        (tmp_path / "bad.jsonl").write_text("{nope\n")
        load_jsonl(tmp_path / "bad.jsonl")
    assert main(["router", "eval", "--data", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_one_label_only_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "easy.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"hello {i}", "label": "easy"}) + "\n" for i in range(20)))
    assert main(["router", "train", "--no-builtin", "--data", str(data), "--out", str(tmp_path / "m")]) == 2
    assert "only one label" in capsys.readouterr().err


def test_the_fitted_model_scores_as_scikit_learn_fitted_it() -> None:
    """The gateway's logit of an example is the fitted model's decision function on the same row, to the
    precision the model file keeps (16-bit weights), shape folding included."""
    import numpy as np

    from gateway_training.fit import _fit_rows, _matrix, _rows

    data = [
        Example([{"role": "user", "content": t.format(n=i)}], "hard", "s", "math")
        for i, t in enumerate(HARD * 3)
    ]
    data += [
        Example([{"role": "user", "content": f"{t} {i}"}], "easy", "s", "smalltalk")
        for i, t in enumerate(EASY * 3)
    ]
    settings = FitSettings()
    rows = _rows(data, settings, None)
    model = _fit_rows(rows, settings)
    from sklearn.linear_model import LogisticRegression

    names = sorted({n for v in rows.vectors for n in v.shape})
    x = _matrix(rows.vectors, {n: i for i, n in enumerate(names)}, settings.parts)
    reference = LogisticRegression(
        C=settings.c, solver="liblinear", class_weight="balanced", max_iter=500, random_state=settings.seed
    ).fit(x, np.asarray(rows.labels))
    expected = reference.decision_function(x)
    got = [model.logit_of(v) for v in rows.vectors]
    assert np.allclose(got, expected, atol=1e-4)


def test_folding_shape_groups_into_the_bias_leaves_every_score_as_it_was() -> None:
    present = [
        frozenset({"s:n=0", "s:x"}),
        frozenset({"s:n=1"}),
        frozenset({"s:n=0"}),
        frozenset({"s:n=2-3"}),
    ]
    shape = {"s:n=0": 1.5, "s:n=1": -0.5, "s:n=2-3": 2.0, "s:x": 0.7}
    before = [sum(shape[n] for n in names) * SHAPE_VALUE - 0.3 for names in present]
    folded = dict(shape)
    bias = fit_module._fold_shape(folded, present, -0.3)
    after = [sum(folded[n] for n in names) * SHAPE_VALUE + bias for names in present]
    assert after == pytest.approx(before)
    assert folded["s:n=0"] == 0.0 and folded["s:x"] == 0.7  # the common bucket weighs 0; "s:x" is no group


def test_held_out_groups_are_scored_by_models_that_never_saw_them(monkeypatch: pytest.MonkeyPatch) -> None:
    examples = []
    for g in range(6):
        for i in range(8):
            hard = i % 2 == 0
            text = HARD[i % 4].format(n=g * 10 + i) if hard else f"{EASY[i % 5]} {g} {i}"
            examples.append(
                Example(
                    [{"role": "user", "content": text}],
                    "hard" if hard else "easy",
                    f"src{g}",
                    "x",
                    group=f"g{g}",
                )
            )
    trained_on: list[set[str]] = []
    real_fit = fit_module._fit_rows

    def recording(rows: Any, settings: Any, meta: Any = None) -> Any:
        trained_on.append({examples[i].unit for i in rows.owners})
        return real_fit(rows, settings, meta)

    monkeypatch.setattr(fit_module, "_fit_rows", recording)
    contexts = load_contexts("eval")
    predictions = fit_module.cross_validate(examples, FitSettings(), 3, None, contexts)
    assert len(trained_on) == 3
    plain = [p for p in predictions if p.variant == "plain"]
    assert sorted(id(p.example) for p in plain) == sorted(id(e) for e in examples)
    assert Counter(p.variant for p in predictions) == {
        "plain": 48,
        "persona": 48,
        "rules": 48,
        "conversation": 48,
    }
    # Each group is in exactly one fold's test set and in none of that fold's training.
    assert all(len(units) == 4 for units in trained_on)


def test_the_calibration_recovers_a_known_mapping() -> None:
    rng = random.Random(3)
    a, b = 0.6, -0.4
    predictions = []
    for _ in range(4000):
        logit = rng.uniform(-8, 8)
        hard = rng.random() < 1 / (1 + math.exp(-(a * logit + b)))
        example = Example([], "hard" if hard else "easy", "s", "c")
        predictions.append(Prediction(example, 0.0, logit))
    got_a, got_b = calibrate(predictions)
    assert got_a == pytest.approx(a, abs=0.08) and got_b == pytest.approx(b, abs=0.15)


def test_the_threshold_is_the_best_balanced_one() -> None:
    def p(label: str, score: float) -> Prediction:
        return Prediction(Example([], label, "s", "c"), score)  # type: ignore[arg-type]

    predictions = [p("hard", 0.9), p("hard", 0.7), p("hard", 0.35), p("easy", 0.3), p("easy", 0.1)]
    t = choose_threshold(predictions)
    assert 0.3 < t <= 0.35


def test_an_operators_own_examples_weigh_more(tmp_path: Path) -> None:
    """With own_weight, a few of an operator's labels move the model against the built-in ones."""
    base = [
        Example([{"role": "user", "content": f"tell me a story about a dragon {i}"}], "easy", "b", "x")
        for i in range(30)
    ]
    base += [
        Example([{"role": "user", "content": f"solve {i} + {i}x = 7 for x"}], "hard", "b", "x")
        for i in range(30)
    ]
    own = [
        Example([{"role": "user", "content": f"a story about a dragon that counts {i}"}], "hard", "mine", "x")
        for i in range(3)
    ]
    text = "a story about a dragon that counts 99"

    def score(weight: float) -> float:
        model = fit_module.fit(
            [*base, *own], FitSettings(own_weight=weight), None, own=lambda e: e.source == "mine"
        )
        return model.score(text).score

    assert score(5.0) > score(1.0)


# ---- the data ---------------------------------------------------------------------------------------------


def test_the_builtin_sources_are_distinct_and_labelled() -> None:
    sources = builtin_sources()
    names = [s.name for s in sources]
    assert len(names) == len(set(names)) >= 40
    assert {s.label for s in sources} == {"hard", "easy"}
    examples = builtin_examples(5, seed=3)
    assert examples == builtin_examples(5, seed=3)
    assert {e.source for e in examples} >= set(names)


def test_the_corpora_are_labelled_by_class_and_licensed() -> None:
    written, real = written_examples(), real_examples()
    assert len({e.unit for e in written}) >= 10 and len(written) >= 4000
    assert len({e.lang for e in written}) >= 8
    for e in [*written, *real]:
        assert e.category in CLASSES and (e.label == "hard") == (e.category in HARD_CLASSES)
    licences = real_licences()
    assert {e.source for e in real} == set(licences)
    assert all(licences.values()) and not any(v.startswith("NOASSERTION") for v in licences.values())


def test_generated_examples_dominate_no_class() -> None:
    examples = builtin_examples(20, seed=7)
    by_class = Counter(e.category for e in examples)
    generated = Counter(e.category for e in examples if e.unit.startswith("gen:"))
    assert set(by_class) == set(CLASSES)
    assert all(generated[c] < 0.5 * by_class[c] for c in CLASSES), (generated, by_class)


def test_evaluation_contexts_are_apart_from_training_ones() -> None:
    train, held = load_contexts("train"), load_contexts("eval")
    for kind in ("persona", "rules", "greeting", "conversation"):
        a = {json.dumps(m, sort_keys=True) for m in getattr(train, kind)}
        b = {json.dumps(m, sort_keys=True) for m in getattr(held, kind)}
        assert a and b and not a & b, kind


def test_an_example_in_context_keeps_its_own_turns_last() -> None:
    contexts = load_contexts("train")
    messages = [{"role": "system", "content": "Translate into German."}, {"role": "user", "content": "hi"}]
    for kind in ("persona", "rules", "conversation"):
        wrapped = in_context(messages, contexts, kind, random.Random(1))
        assert wrapped[-1] == messages[-1] and messages[0] in wrapped
        assert vector_of(wrapped).ngrams == vector_of(messages).ngrams  # the newest turn is unchanged
