"""The model card ``gateway router train --card`` writes beside a model: what it reads, what it was
trained on under which licences, and how it did on groups it had not seen."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gateway.routing.scorer.model import ScorerModel
from gateway.routing.scorer.vector import BITS, FEATURE_SET
from gateway_training.corpus import WRITTEN_LICENCE, real_licences
from gateway_training.report import (
    TARGETS,
    Evaluation,
    expected_calibration_error,
    per_class,
    per_context,
    per_language,
    pooled,
    reliability,
    sweep,
)
from gateway_training.sources import Example

__all__ = ["model_card"]


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def model_card(
    model: ScorerModel, examples: Sequence[Example], evaluation: Evaluation, eval_only: set[str]
) -> str:
    t = evaluation.threshold
    real = evaluation.plain(lambda e: e.unit.startswith("real:"))
    written = evaluation.plain(lambda e: e.unit.startswith("written:"))
    measured = [p for p in evaluation.predictions if not p.example.unit.startswith("gen:")]
    raw = [p for p in evaluation.raw if p.variant == "plain" and not p.example.unit.startswith("gen:")]
    plain = [p for p in measured if p.variant == "plain"]
    kinds = Counter(e.unit.split(":", 1)[0] for e in examples)
    written_units = {e.unit for e in examples if e.unit.startswith("written:")}
    groups, languages = len(written_units), len({e.lang for e in examples if e.unit in written_units})
    labels = Counter(e.label for e in examples)
    licences = real_licences()
    a, b = model.calibration
    lines = [
        "# The routing scorer's model card",
        "",
        f"Feature set `{FEATURE_SET}`: the newest user turn's words, word pairs and character 2- to "
        f"4-grams, hashed into 2^{BITS} buckets; the text features of `gateway/routing/scorer/text.py` "
        "(words with numbers folded, pasted material apart from its instruction, the shape of the text); "
        "and the context's words (system prompt) and words and character 3-grams (the two user turns "
        "before the newest), with weights of their own. One logistic regression, calibrated: "
        f"`P(hard) = sigmoid({a:.3f} * logit + {b:.3f})`. Threshold {t:.2f}.",
        "",
        "## Data",
        "",
        f"{len(examples)} examples ({labels['hard']} hard, {labels['easy']} easy): "
        f"{kinds['written']} written, {kinds['real']} real, {kinds['gen']} generated. "
        "Every example is also trained on behind one training context (a bot persona and a greeting, a "
        "rules-style system prompt, or unrelated small talk).",
        "",
        f"- Written corpus: {WRITTEN_LICENCE}; {groups} groups by different briefs, {languages} languages.",
        "- Generated: this project's generators (Apache-2.0) and reasoning-gym tasks (Apache-2.0), at most "
        "20 examples a source: never measured.",
        "- Real collections, trained on and measured (each held out in turn):",
    ]
    for source in sorted(licences):
        lines.append(f"  - `{source}`: {licences[source]}")
    if eval_only:
        lines.append("- Real collections measured only, never trained on (no licence stated):")
        for source in sorted(eval_only):
            lines.append(f"  - `{source}`")
    hard_real, easy_real = pooled(real, t)
    hard_written, easy_written = pooled(written, t)
    lines += [
        "",
        "## Held out",
        "",
        "Groups (a written group, a real collection, a generator source) dealt into folds; each fold's "
        "prompts scored by a model fitted on the others. Real collections first: they are the measure.",
        "",
        f"- Real prompts ({len(real)}): hard recall {_pct(hard_real)}, easy recall {_pct(easy_real)} "
        f"(targets {_pct(TARGETS['hard'])} and {_pct(TARGETS['easy'])}).",
        f"- Written groups ({len(written)}): hard recall {_pct(hard_written)}, easy recall "
        f"{_pct(easy_written)}.",
        "",
        "### By class (real and written)",
        "",
        per_class(plain, t),
        "",
        "### By language (languages with at least 100 prompts; most non-English ones are written groups)",
        "",
        per_language(plain, t),
        "",
        "### In bot and chat contexts (contexts written apart from the training ones)",
        "",
        per_context(measured, t),
        "",
        "### Threshold sweep (real and written)",
        "",
        sweep(plain),
        "",
        "### Reliability (real and written, plain)",
        "",
        reliability(raw, plain),
        "",
        f"Expected calibration error: {_pct(expected_calibration_error(raw))} before calibration, "
        f"{_pct(expected_calibration_error(plain))} after.",
        "",
    ]
    return "\n".join(lines)
