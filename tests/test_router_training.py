"""``gateway router train`` and ``gateway router eval``: an operator's retraining loop."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from gateway.cli import main
from gateway.routing.scorer.load import load_model
from gateway_training.data import DataError, builtin_examples, builtin_sources, load_jsonl
from gateway_training.sources import Example
from tests.support import checkout_env

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
    """A small labelled file in two sources, as an operator would export from their own traffic."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        hard = i % 2 == 0
        text = rng.choice(HARD).format(n=rng.randint(3, 99)) if hard else f"{rng.choice(EASY)} #{i}"
        source = "file:team-a" if i % 4 < 2 else "file:team-b"
        rows.append({"messages": [{"role": "user", "content": text}], "label": "hard" if hard else "easy"})
        rows[-1]["source"] = source
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_train_is_deterministic_and_eval_reads_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "labelled.jsonl"
    write_data(data)
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    card = tmp_path / "card.md"
    for out in (first, second):
        argv = [
            "router",
            "train",
            "--no-builtin",
            "--data",
            str(data),
            "--out",
            str(out),
            "--card",
            str(card),
        ]
        assert main(argv) == 0
    assert first.read_bytes() == second.read_bytes()  # seeded, and the file carries no timestamp
    text = card.read_text()
    assert "| file:team-a | " in text and "operator's data" in text and "hard recall" in text
    assert "routing targets" not in text  # labels alone: no class has a target
    printed = capsys.readouterr().out
    assert (
        "Sources held out one at a time" in printed
        and "file:team-a" in printed
        and "chosen threshold" in printed
    )
    model = load_model(first)
    assert model.meta["examples"] == 40 and set(model.meta["by_source"]) == {"file:team-a", "file:team-b"}
    assert model.score("Prove that 51 is not a perfect square.").score > model.score("hi there #3").score

    assert main(["router", "eval", "--data", str(data), "--model", str(first)]) == 0
    report = capsys.readouterr().out
    assert "| class | label | n | routed as labelled |" in report
    assert "| labelled \\ scored |" in report and "| threshold | hard recall | easy recall |" in report


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
    data.write_text('{"prompt": "hello", "label": "easy"}\n{"prompt": "hi", "label": "easy"}\n')
    assert main(["router", "train", "--no-builtin", "--data", str(data), "--out", str(tmp_path / "m")]) == 2
    assert "both labels" in capsys.readouterr().err


def test_the_builtin_sources_are_distinct_and_labelled() -> None:
    sources = builtin_sources()
    names = [s.name for s in sources]
    assert len(names) == len(set(names)) >= 40
    assert {s.label for s in sources} == {"hard", "easy"}
    examples = builtin_examples(5, seed=3)
    assert examples == builtin_examples(5, seed=3)
    assert {e.source for e in examples} >= set(names)


def _rows_and_columns(examples: list[Example], min_count: int) -> tuple[list[set[str]], list[str]]:
    """The examples' features and, sorted, those the fit keeps (seen in ``min_count`` examples or more),
    counted here rather than by the trainer's code, so that the tests below check it."""
    from gateway_training.fit import _features

    rows = [_features(e) for e in examples]
    counts: dict[str, int] = {}
    for row in rows:
        for f in row:
            counts[f] = counts.get(f, 0) + 1
    return rows, sorted(f for f, n in counts.items() if n >= min_count)


def _assert_scores_as_sklearn(model: Any, examples: list[Example], dense: Any, c: float) -> None:
    """The gateway's scores of ``examples`` are sklearn's probabilities, fitted as the trainer fits, on
    the rows ``dense`` (the values each feature entered the fit with, worked out by the test)."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    reference = LogisticRegression(
        C=c, solver="liblinear", class_weight="balanced", max_iter=2000, random_state=0
    ).fit(csr_matrix(dense), [e.label == "hard" for e in examples])
    expected = reference.predict_proba(csr_matrix(dense))[:, 1]
    got = [model.score(e.messages[-1]["content"]).score for e in examples]
    assert np.allclose(got, expected, atol=2e-3)  # the stored weights are rounded to 4 decimals


def test_scaled_structure_features_score_as_the_fit_did(tmp_path: Path) -> None:
    """The fit sees structure features with a larger value (FitSettings.structure_scale); the stored
    weights are scaled back, so the gateway's sum over present features gives sklearn's probability."""
    import numpy as np

    from gateway_training.fit import FitSettings, _scale, fit

    data = tmp_path / "labelled.jsonl"
    write_data(data, n=60)
    examples = load_jsonl(data)
    settings = FitSettings(structure_scale=3.0, prune=0.0, meaning_scale=0.0, damping=0.0)
    model = fit(examples, settings)
    assert model.meaning_count == 0 and len(model.heads) == 1  # labels alone: one head
    rows, names = _rows_and_columns(examples, settings.min_count)
    assert any(_scale(n, 3.0) == 3.0 for n in names) and any(_scale(n, 3.0) == 1.0 for n in names)
    column = {f: i for i, f in enumerate(names)}
    dense = np.zeros((len(rows), len(names)))
    for r, row in enumerate(rows):
        for f in row:
            if f in column:
                dense[r, column[f]] = _scale(f, 3.0)
    _assert_scores_as_sklearn(model, examples, dense, settings.c)


def test_damped_word_blocks_score_as_the_fit_did(tmp_path: Path) -> None:
    """The fit damps each row's word blocks by their size (FitSettings.damping), as the scorer does at
    run time: the gateway's score of a long request is sklearn's probability on the damped rows."""
    import numpy as np

    from gateway_training.fit import FitSettings, fit

    data = tmp_path / "labelled.jsonl"
    write_data(data, n=60)
    examples = load_jsonl(data)
    settings = FitSettings(structure_scale=1.0, prune=0.0, meaning_scale=0.0, damping=3.0)
    model = fit(examples, settings)
    assert model.damping == 3.0 and model.meta["damping"] == 3.0
    rows, names = _rows_and_columns(examples, settings.min_count)
    column = {f: i for i, f in enumerate(names)}
    dense = np.zeros((len(rows), len(names)))
    for r, row in enumerate(rows):
        # Counted here by the features' prefixes, not by the scorer's code.
        sizes = {p: sum(f.startswith(p) for f in row) for p in ("w:", "b:", "p:", "c:w:")}
        for f in row:
            if f in column:
                prefix = next((p for p in sizes if f.startswith(p)), None)
                dense[r, column[f]] = min(1.0, (3.0 / sizes[prefix]) ** 0.5) if prefix else 1.0
    assert dense.max() == 1.0 and 0 < dense[dense > 0].min() < 0.6  # some rows were damped
    _assert_scores_as_sklearn(model, examples, dense, settings.c)


def test_categories_give_a_head_per_group_scored_as_the_fits_did(tmp_path: Path) -> None:
    """Examples in several groups of categories (fit.GROUPS) give one head per group, each fitted one
    against the rest as sklearn fits it; the gateway's score is the hard heads' share of the heads'
    probabilities. A category listed with the other label falls to that label's "other" group. A head
    with a factor in ``head_c`` is fitted with C times it, the others with C."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    from gateway_training.fit import FitSettings, fit, group_of
    from gateway_training.sources import Example

    data = tmp_path / "labelled.jsonl"
    write_data(data, n=80)
    # Four groups: the easy half split into small talk and other easy, the hard half into reasoning and
    # maths, and code.
    examples = [
        Example(
            e.messages,
            e.label,
            e.source,
            ("math" if i % 4 == 0 else "code")
            if e.label == "hard"
            else ("smalltalk" if i % 4 == 1 else "factual"),
        )
        for i, e in enumerate(load_jsonl(data))
    ]
    assert group_of(Example([], "easy", "s", "code")) == "other easy"  # code, labelled easy
    assert group_of(Example([], "hard", "s", "custom")) == "other hard"
    settings = FitSettings(
        structure_scale=1.0, prune=0.0, meaning_scale=0.0, head_c=(("small talk", 0.1), ("code", 3.0))
    )
    model = fit(examples, settings)
    assert model.meta["head_c"] == {"small talk": 0.1, "code": 3.0}
    assert [(h.name, h.hard) for h in model.heads] == [
        ("code", True),
        ("other easy", False),
        ("reasoning and maths", True),
        ("small talk", False),
    ]
    rows, names = _rows_and_columns(examples, settings.min_count)
    column = {f: i for i, f in enumerate(names)}
    dense = np.zeros((len(rows), len(names)))
    for r, row in enumerate(rows):
        for f in row:
            if f in column:
                dense[r, column[f]] = 1.0
    groups = [group_of(e) for e in examples]
    probabilities = []
    c = {"code": 3.0 * settings.c, "small talk": 0.1 * settings.c}
    for head in model.heads:
        reference = LogisticRegression(
            C=c.get(head.name, settings.c),
            solver="liblinear",
            class_weight="balanced",
            max_iter=2000,
            random_state=0,
        ).fit(csr_matrix(dense), [g == head.name for g in groups])
        probabilities.append(reference.predict_proba(csr_matrix(dense))[:, 1])
    p = np.asarray(probabilities)
    hard = np.asarray([h.hard for h in model.heads])
    expected = p[hard].sum(axis=0) / p.sum(axis=0)
    got = [model.score(e.messages[-1]["content"]).score for e in examples]
    assert np.allclose(got, expected, atol=2e-3)  # the stored weights are rounded to 4 decimals


def test_meaning_weights_score_as_the_fit_did(tmp_path: Path) -> None:
    """The fit sees each block's mean word vector; the model keeps one number per word and block (the
    vector's projection on the block's coefficients), and the gateway's mean of those numbers gives
    sklearn's probability. Built here from the vectors directly, not from the trainer's helper."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    from gateway.routing.scorer.linear import MEANING_PRIOR
    from gateway_training.fit import FitSettings, fit
    from gateway_training.vectors import load_word_vectors

    data = tmp_path / "labelled.jsonl"
    write_data(data, n=60)
    examples = load_jsonl(data)
    settings = FitSettings(structure_scale=1.0, prune=0.0, meaning_scale=5.0)
    model = fit(examples, settings)
    vectors = load_word_vectors()
    assert model.meaning_count == 3 * len(vectors.words)  # a number per word and block (w:, p:, c:w:)
    rows, names = _rows_and_columns(examples, settings.min_count)
    column = {f: i for i, f in enumerate(names)}
    blocks = ("w:", "p:", "c:w:")
    dense = np.zeros((len(rows), len(names) + 3 * vectors.dims))
    for r, row in enumerate(rows):
        for f in row:
            if f in column:
                dense[r, column[f]] = 1.0
        for b, block in enumerate(blocks):
            words = [f[len(block) :] for f in row if f.startswith(block) and f[len(block) :] in vectors.index]
            if words:
                vecs = [vectors.vectors[vectors.index[w]] for w in words]
                mean = np.sum(vecs, axis=0) / (len(words) + MEANING_PRIOR)
                start = len(names) + b * vectors.dims
                dense[r, start : start + vectors.dims] = 5.0 * mean
    assert np.count_nonzero(dense[:, len(names) :]) > 0  # the test's prompts have words in the table
    reference = LogisticRegression(
        C=settings.c, solver="liblinear", class_weight="balanced", max_iter=2000, random_state=0
    ).fit(csr_matrix(dense), [e.label == "hard" for e in examples])
    expected = reference.predict_proba(csr_matrix(dense))[:, 1]
    got = [model.score(e.messages[-1]["content"]).score for e in examples]
    assert np.allclose(got, expected, atol=2e-3)  # weights rounded to 4 decimals, meaning to 3


_MEANING_DIGEST = """
import hashlib
from gateway_training.fit import meaning_matrix
from gateway_training.vectors import load_word_vectors
from gateway.routing.scorer.blocks import request_features
text = "Could you plan a quiet weekend trip with my parents: a picnic, a museum and a walk by the river?"
rows = [request_features(text, "Earlier we talked about trains, buses, tickets and timetables in the city.")]
print(hashlib.sha256(meaning_matrix(rows, load_word_vectors(), 12.0).tobytes()).hexdigest())
"""


def test_the_meaning_features_do_not_depend_on_the_hash_seed() -> None:
    """A row's words are a set, whose order follows the process's hash seed; summed in another order the
    mean differs in its last bits, and a retrained model file would differ (the same data must give the
    same file). Two processes with different seeds must compute the same bytes."""
    import subprocess
    import sys

    digests = set()
    for seed in ("1", "2", "3"):
        env = checkout_env(PYTHONHASHSEED=seed)
        run = subprocess.run(
            [sys.executable, "-c", _MEANING_DIGEST], env=env, capture_output=True, text=True, check=True
        )
        digests.add(run.stdout.strip())
    assert len(digests) == 1


def test_the_word_vectors_place_related_words_together() -> None:
    from gateway_training.vectors import load_word_vectors

    vectors = load_word_vectors()
    assert vectors.dims == 256 and len(vectors.words) > 20_000
    norms = (vectors.vectors**2).sum(axis=1) ** 0.5
    assert abs(float(norms.mean()) - 1.0) < 0.01  # unit vectors, to int8 quantisation

    def similarity(a: str, b: str) -> float:
        return float(vectors.vectors[vectors.index[a]] @ vectors.vectors[vectors.index[b]])

    assert similarity("python", "java") > similarity("python", "breakfast")
    assert similarity("weekend", "holiday") > similarity("weekend", "compiler")


def test_the_policy_report_counts_structural_rules_first() -> None:
    from gateway_training.fit import Prediction
    from gateway_training.report import under_policy
    from gateway_training.sources import Example

    snippet = Example([{"role": "user", "content": "Is `rm -rf ./build` safe?"}], "hard", "s", "code")
    prose = Example([{"role": "user", "content": "Is my bike safe to ride?"}], "easy", "s", "advice")
    routed = under_policy([Prediction(snippet, 0.1), Prediction(prose, 0.2)])
    assert [p.score for p in routed] == [1.0, 0.2]


def test_the_targets_report_says_where_each_target_is_met_and_what_it_costs_the_others() -> None:
    """report.targets: a hard class meets its target up to a threshold, an easy one from a threshold; the
    classes short of theirs at that edge; whether one threshold meets them all, and without which."""
    from gateway_training.fit import Prediction
    from gateway_training.report import targets

    def predictions(scores: list[float], label: str, category: str) -> list[Prediction]:
        return [Prediction(Example([], label, "s", category), s) for s in scores]

    goals = {"code": 1.0, "reasoning": 0.95, "smalltalk": 0.97}
    # Code is all on the hard side only up to 0.05 (its lowest score); reasoning up to 0.80; small talk
    # is all on the easy side from 0.31 (above its highest score).
    rows = (
        predictions([0.9, 0.9, 0.05], "hard", "code")
        + predictions([0.8] * 20, "hard", "reasoning")
        + predictions([0.1, 0.2, 0.3], "easy", "smalltalk")
        + predictions([0.5], "easy", "advice")  # no target: not in the report
    )
    report = targets(rows, goals)
    assert "| code | 100% | up to 0.05 | smalltalk 0.0% |" in report
    assert "| reasoning | 95% | up to 0.80 | code 66.7% |" in report
    assert "| smalltalk | 97% | from 0.31 | code 66.7% |" in report
    assert "advice" not in report
    assert "Every target met at once: at no threshold." in report
    assert "Every target but code's: 0.31-0.80." in report
    assert "Every target but smalltalk's: 0.01-0.05." in report
    assert "Every target but reasoning's" not in report  # code and small talk conflict without it too
    # Code's lowest score raised above small talk's highest: one band meets every target.
    rows[2] = Prediction(rows[2].example, 0.4)
    assert "Every target met at once: 0.31-0.40." in targets(rows, goals)
    assert targets(predictions([0.5], "easy", "operator"), goals) == ""


def test_the_threshold_is_the_best_balanced_one_that_fails_its_weakest_class_least() -> None:
    """choose_threshold: the best balanced accuracy; among thresholds within NEAR_BEST of it, the one
    whose worst class does best; a threshold off the plateau is never chosen for its classes."""
    from gateway_training.fit import NEAR_BEST, Prediction, balanced_accuracy, choose_threshold
    from gateway_training.sources import Example

    def predictions(scores: list[float], label: str, category: str) -> list[Prediction]:
        return [Prediction(Example([], label, "s", category), s) for s in scores]

    # 100 hard examples scored 0.9; easy ones: 50 of class "facts" at 0.1, 50 of class "chat" of which
    # one scores 0.545 and one 0.555: thresholds up to 0.54 send both to the hard side, 0.55 one, from
    # 0.56 none.
    rows = (
        predictions([0.9] * 100, "hard", "maths")
        + predictions([0.1] * 50, "easy", "facts")
        + predictions([0.2] * 48 + [0.545, 0.555], "easy", "chat")
    )
    assert balanced_accuracy(rows, 0.56) == 1.0 and balanced_accuracy(rows, 0.50) < 1.0
    assert choose_threshold(rows) == 0.56  # the best, nearest 0.5 among the perfect 0.56-0.90
    # Two thresholds as good on balance: up to 0.52 every hard example is right and 6 of the 100 facts
    # wrong (hard 100 %, easy 97 %); from 0.54, 3 hard examples are wrong and every easy one right (hard
    # 97 %, easy 100 %). Nearest 0.5 would be 0.50, where "facts" fails 6 %; 0.54 fails no class by more
    # than 3 %.
    rows = (
        predictions([0.9] * 97 + [0.52] * 3, "hard", "maths")
        + predictions([0.1] * 94 + [0.53] * 6, "easy", "facts")
        + predictions([0.1] * 100, "easy", "chat")
    )
    assert balanced_accuracy(rows, 0.50) == pytest.approx(balanced_accuracy(rows, 0.54))
    assert choose_threshold(rows) == 0.54
    assert NEAR_BEST < 0.01  # a threshold a point worse on balance is not chosen for its classes


def test_sources_held_out_in_groups_are_each_scored_by_a_model_that_never_saw_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """leave_one_source_out(folds=N): N fits, each without the sources it scores; every example once."""
    from gateway_training import fit as fit_module
    from gateway_training.sources import Example

    data = tmp_path / "labelled.jsonl"
    write_data(data, n=80)
    examples = [
        Example(e.messages, e.label, f"file:{i % 5}", e.category) for i, e in enumerate(load_jsonl(data))
    ]
    trained_on: list[set[str]] = []
    real_fit = fit_module.fit

    def recording_fit(train: Any, *args: Any, **kwargs: Any) -> Any:
        trained_on.append({e.source for e in train})
        return real_fit(train, *args, **kwargs)

    scored_by: dict[str, set[str]] = {}
    real_predict = fit_module.predict

    def recording_predict(model: Any, held: Any) -> Any:
        scored_by.update({e.source: trained_on[-1] for e in held})
        return real_predict(model, held)

    monkeypatch.setattr(fit_module, "fit", recording_fit)
    monkeypatch.setattr(fit_module, "predict", recording_predict)
    settings = fit_module.FitSettings(meaning_scale=0.0)
    predictions = fit_module.leave_one_source_out(examples, settings, jobs=1, folds=2)
    assert len(trained_on) == 2  # two groups of sources, not five
    assert sorted(id(p.example) for p in predictions) == sorted(id(e) for e in examples)
    assert all(source not in scored_by[source] for source in scored_by) and len(scored_by) == 5


def test_the_card_gives_a_head_its_own_c() -> None:
    from gateway_training.card import _head_c

    assert _head_c({"c": 0.5, "head_c": {"small talk": 0.25}}) == " and 0.125 for the small talk head"
    assert _head_c({"c": 0.5, "head_c": {}}) == "" == _head_c({"c": 0.5})  # one head, or none set


@pytest.mark.parametrize("head_c", [(("smalltalk", 0.5),), (("small talk", 0.0),), (("code", -1.0),)])
def test_a_head_c_for_no_head_or_not_above_zero_is_refused(head_c: tuple[tuple[str, float], ...]) -> None:
    from gateway_training.fit import FitSettings

    with pytest.raises(ValueError, match="head_c"):
        FitSettings(head_c=head_c)
