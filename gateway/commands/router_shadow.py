"""``gateway router labels`` and ``gateway router threshold``: judged traffic as training data for the
difficulty scorer, and the threshold it suggests (docs/shadow.md); ``gateway router train`` prints the same
suggestion for its held-out scores of the operator's examples (``suggested_on``).

``labels`` reads the samples shadow evaluation stored in the usage database (their prompts are there only
with ``shadow.store_content``) and writes them in the trainer's format, readable by its owner only: they
hold clients' prompts. ``threshold`` scores labelled requests with a model and prints the threshold that
minimises regrets plus ``cost_ratio`` times missed savings. Neither needs the training package.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import orjson
from sqlalchemy.exc import SQLAlchemyError

from gateway.commands.usage import existing, ledger_url
from gateway.config import load_settings
from gateway.errors import ModelError
from gateway.routing import extract_features
from gateway.routing.scorer.load import DEFAULT_MODEL, load_model
from gateway.shadow.labels import labelled, read_labels
from gateway.shadow.settings import ShadowSettings
from gateway.shadow.store import SampleStore
from gateway.shadow.threshold import Suggestion, suggest
from gateway.usage.query import parse_since

__all__ = ["add_actions", "add_cost_ratio", "report", "suggested_on"]


def add_actions(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = actions.add_parser(
        "labels",
        help="write judged requests (shadow evaluation) as labelled training examples",
        description=(
            "Write the requests shadow evaluation judged as training examples: hard when the diffusion "
            "answer was worse, easy when it was as good or better. Needs shadow.store_content: true."
        ),
    )
    p.add_argument("--config", type=Path, help="YAML configuration (default: $GATEWAY_CONFIG)")
    p.add_argument("--url", help="the usage database's URL (default: usage.url of --config)")
    p.add_argument("--since", default="7d", help="a duration (12h, 7d, 4w) or an ISO date (default 7d)")
    p.add_argument("--out", type=Path, required=True, help="the JSONL file to write (mode 0600)")
    p.set_defaults(func=_labels)

    p = actions.add_parser(
        "threshold",
        help="the threshold that minimises regrets plus cost ratio x missed savings on labelled requests",
    )
    p.add_argument("--labels", type=Path, action="append", required=True, metavar="FILE.jsonl")
    p.add_argument("--model", default=None, help="default: routing.scorer.model of --config, else shipped")
    add_cost_ratio(p, default=None)
    p.add_argument("--config", type=Path, help="YAML configuration (default: none)")
    p.set_defaults(func=_threshold)


def add_cost_ratio(p: argparse.ArgumentParser, default: float | None = ShadowSettings().cost_ratio) -> None:
    """``--cost-ratio``: what a missed saving costs against a regret, for the suggested threshold."""
    p.add_argument(
        "--cost-ratio",
        type=float,
        default=default,
        help="what a missed saving costs against a regret, for the suggested threshold "
        f"(default: shadow.cost_ratio, {ShadowSettings().cost_ratio:g})",
    )


def suggested_on(scored: Sequence[tuple[float, str]], ratio: float, current: float) -> str:
    """The suggestion for (score, label) pairs, as printed; a line saying there is none without them."""
    if not scored:
        return "\nno examples of yours (--data) to suggest a threshold on"
    return "\nYour examples, each scored by a model that never saw it:\n\n" + report(
        suggest(scored, ratio), ratio, current
    )


def _labels(args: argparse.Namespace) -> int:
    try:
        since = parse_since(args.since)
    except ValueError as exc:
        print(f"gateway: --{exc}", file=sys.stderr)
        return 2
    url = existing(*ledger_url(args))
    if url is None:
        return 1
    store = SampleStore(url)
    try:
        every = store.samples(since)
    except SQLAlchemyError as exc:
        print(f"gateway: cannot read {store.where}: {type(exc).__name__}", file=sys.stderr)
        return 1
    finally:
        store.dispose()
    judged = [s for s in every if s["verdict"] is not None]
    found = labelled(judged)
    # The prompts of clients: readable by their owner only, as the database that held them.
    fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        for row in found.rows:
            out.write(orjson.dumps(row) + b"\n")
    rows = found.rows
    hard = sum(1 for row in rows if row["label"] == "hard")
    print(
        f"wrote {len(rows)} labelled requests to {args.out} ({hard} hard, {len(rows) - hard} easy) "
        f"from {len(judged)} judged samples of {len(every)}"
    )
    unkept = sum(1 for s in judged if s["request"] is None)
    if unkept:
        print(f"{unkept} judged samples have no stored prompt: shadow.store_content was off", file=sys.stderr)
    if found.split:
        print(f"{found.split} requests left out: their verdicts were split evenly", file=sys.stderr)
    return 0


def _threshold(args: argparse.Namespace) -> int:
    settings = load_settings(args.config) if args.config is not None else None
    model_name = args.model or (settings.routing.scorer.model if settings is not None else DEFAULT_MODEL)
    ratio = args.cost_ratio
    if ratio is None:
        ratio = (settings.shadow if settings is not None else ShadowSettings()).cost_ratio
    try:
        model = load_model(model_name)
        labelled_requests = [
            pair
            for path in args.labels
            for pair in read_labels(path.read_text(encoding="utf-8").splitlines())
        ]
    except (ModelError, OSError, ValueError) as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    scored = []
    for request, label in labelled_requests:
        endpoint = "completions" if "prompt" in request else "chat"
        difficulty = extract_features(request, endpoint, model).difficulty
        scored.append((difficulty.score if difficulty is not None else 0.0, label))
    try:
        suggestion = suggest(scored, ratio)
    except ValueError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    print(report(suggestion, ratio, model.threshold))
    return 0


def report(suggestion: Suggestion, ratio: float, current: float) -> str:
    """The sweep, the model's own threshold and the suggested one, as printed."""
    lines = [
        f"{suggestion.hard + suggestion.easy} labelled requests ({suggestion.hard} hard, {suggestion.easy} "
        f"easy); a missed saving costs {ratio:g} of a regret",
        "",
        "threshold  regrets  missed savings  cost",
    ]
    for p in suggestion.sweep:
        lines.append(f"{p.threshold:9.2f}  {p.regrets:7d}  {p.missed:14d}  {p.cost:g}")
    best = suggestion.best
    lines += [
        "",
        f"the model's threshold {current:.2f}",
        f"suggested threshold {best.threshold:.2f}: {best.regrets} regrets, {best.missed} missed savings "
        f"(routing.scorer.threshold: {best.threshold:.2f})",
    ]
    return "\n".join(lines)
