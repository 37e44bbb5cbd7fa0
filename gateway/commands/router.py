"""``gateway router train`` and ``gateway router eval``: the difficulty scorer's model, made and measured
(``labels`` and ``threshold``, from shadow evaluation's judged traffic, are in router_shadow.py).

The arguments are parsed here and the work is done by the trainer, ``gateway_training``: a distribution
of its own (training/ in the repository), which the gateway's wheel and image leave out. It is imported
when an action runs, so ``--help`` and every other command work without it, and a missing trainer is a
one-line hint, not a traceback.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from gateway.commands import router_shadow
from gateway.errors import ModelError
from gateway.routing.features import conversation
from gateway.routing.scorer.load import DEFAULT_MODEL, dump_model, load_model

__all__ = ["INSTALL", "add_parser"]

# What to install, said where the trainer is missing (and in each action's help). The distribution is not
# on a package index: a checkout of the repository installs it.
INSTALL = "pip install -e ./training (from a checkout of the gateway's repository)"
TRAINER = "gateway_training"


def _missing(exc: ModuleNotFoundError, action: str) -> int:
    """Exit 2 with the hint when the trainer itself is what could not be imported; re-raise otherwise,
    since a module missing inside an installed trainer is a broken install, and its traceback says which."""
    if exc.name != TRAINER:
        raise exc
    print(
        f"gateway: `gateway router {action}` needs the training package, which is not installed: {INSTALL}",
        file=sys.stderr,
    )
    return 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    router = sub.add_parser("router", help="train or evaluate the routing difficulty scorer")
    actions = router.add_subparsers(required=True, metavar="ACTION")

    p = actions.add_parser(
        "train",
        help="train a scorer model (needs the training package)",
        description=(
            "Train a scorer model: the built-in corpora and your own labelled examples, evaluated with "
            "groups held out, calibrated, and written with a model card. "
            f"Needs the training package: {INSTALL}."
        ),
    )
    p.add_argument(
        "--data",
        type=Path,
        action="append",
        default=[],
        metavar="FILE.jsonl",
        help='your labelled examples: {"messages": [...], "label": "hard"|"easy"} per line; repeatable',
    )
    p.add_argument("--no-builtin", action="store_true", help="train on the --data files only")
    p.add_argument(
        "--own-weight",
        type=float,
        default=3.0,
        help="how much more one of your examples weighs than a built-in one (default 3)",
    )
    p.add_argument("--per-source", type=int, default=20, help="examples drawn per built-in generator")
    p.add_argument(
        "--eval-data",
        type=Path,
        default=None,
        metavar="DIR",
        help="more real collections (*.jsonl.gz) to measure on, never trained on",
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--c", type=float, default=None, help="inverse regularisation strength (default 4)")
    p.add_argument("--folds", type=int, default=8, help="groups are held out in this many folds (min 2)")
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="store this threshold instead of the one the held-out evaluation chooses",
    )
    p.add_argument("--out", type=Path, required=True, help="the model file to write (.bin.gz)")
    p.add_argument("--card", type=Path, help="also write a model card (Markdown): data, licences, figures")
    router_shadow.add_cost_ratio(p)
    p.set_defaults(func=_train)

    p = actions.add_parser(
        "eval",
        help="recall by class, threshold sweep and the misrouted prompts (needs the training package)",
        description=f"Evaluate a scorer model on labelled prompts. Needs the training package: {INSTALL}.",
    )
    p.add_argument("--data", type=Path, action="append", required=True, metavar="FILE.jsonl")
    p.add_argument("--model", default=DEFAULT_MODEL, help="a model file (default: the shipped model)")
    p.add_argument("--threshold", type=float, default=None, help="default: the model's")
    p.add_argument("--misrouted", type=int, default=20, help="list this many misrouted prompts (0: none)")
    p.set_defaults(func=_eval)

    router_shadow.add_actions(actions)


def _train(args: argparse.Namespace) -> int:
    try:
        from gateway_training.card import model_card
        from gateway_training.corpus import load_contexts
        from gateway_training.data import DataError, builtin_examples, load_jsonl
        from gateway_training.fit import FitSettings, fit
        from gateway_training.report import evaluate, per_class, pooled, progress_line, sweep
    except ModuleNotFoundError as exc:
        return _missing(exc, "train")

    try:
        builtin = [] if args.no_builtin else builtin_examples(args.per_source, args.seed, args.eval_data)
        own = [e for path in args.data for e in load_jsonl(path)]
    except DataError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    examples = [*builtin, *own]
    if not examples:
        print("gateway: no training examples (give --data, or drop --no-builtin)", file=sys.stderr)
        return 2
    if args.folds < 2:
        print("gateway: --folds must be at least 2", file=sys.stderr)
        return 2
    eval_only = _eval_only(args.eval_data)
    own_sources = {e.source for e in own}
    settings = FitSettings(
        seed=args.seed, own_weight=args.own_weight, **({"c": args.c} if args.c is not None else {})
    )
    contexts = None if args.no_builtin else load_contexts("train")
    held_out = None if args.no_builtin else load_contexts("eval")
    units = len({e.unit for e in examples})
    if len(examples) < 2 * args.folds or len({e.label for e in examples}) < 2:
        print(f"gateway: too few examples for {args.folds} folds, or only one label", file=sys.stderr)
        return 2
    print(f"{len(examples)} examples ({len(own)} yours), {units} groups, {args.folds} folds", file=sys.stderr)
    try:
        evaluation = evaluate(
            examples,
            settings,
            args.folds,
            contexts,
            held_out,
            trainable=lambda e: e.source not in eval_only,
            measured=lambda e: not e.unit.startswith("gen:"),
            progress=progress_line,
            own=lambda e: e.source in own_sources,
        )
        threshold = evaluation.threshold if args.threshold is None else args.threshold
        plain = evaluation.plain()
        hard, easy = pooled(plain, threshold)
        print(f"\nHeld out, threshold {threshold:.2f}: hard recall {hard:.1%}, easy recall {easy:.1%}\n")
        print(per_class(plain, threshold))
        print()
        print(sweep(plain))
        # Your examples (judged traffic from `gateway router labels`, say), each scored held out: the
        # threshold they suggest at the cost ratio (docs/shadow.md).
        yours = [(p.score, p.example.label) for p in plain if p.example.source in own_sources]
        print(router_shadow.suggested_on(yours, args.cost_ratio, threshold))
        print("\nfitting the model on every example...", file=sys.stderr)
        model = fit(
            [e for e in examples if e.source not in eval_only],
            settings,
            contexts,
            calibration=evaluation.calibration,
            threshold=threshold,
            own=lambda e: e.source in own_sources,
        )
    except (RuntimeError, ValueError) as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("sklearn", "scipy", "numpy"):
            raise
        print(f"gateway: training needs scikit-learn, which is not installed: {INSTALL}", file=sys.stderr)
        return 2
    data = dump_model(model)
    args.out.write_bytes(data)
    if args.card:
        args.card.write_text(model_card(model, examples, evaluation, eval_only), encoding="utf-8")
    print(f"\nwrote {args.out}: {len(data) / 1024:.0f} KiB, threshold {threshold:.2f}")
    return 0


def _eval_only(folder: Path | None) -> set[str]:
    """The sources of the evaluation-only collections in ``folder``."""
    if folder is None:
        return set()
    from gateway_training.corpus import real_licences

    return set(real_licences(folder)) - set(real_licences(None))


def _eval(args: argparse.Namespace) -> int:
    try:
        from gateway_training.data import DataError, load_jsonl
        from gateway_training.fit import Prediction, vector_of
        from gateway_training.report import misrouted, per_class, pooled, sweep
    except ModuleNotFoundError as exc:
        return _missing(exc, "eval")

    try:
        model = load_model(args.model)
        examples = [e for path in args.data for e in load_jsonl(path)]
    except (ModelError, DataError) as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    threshold = args.threshold if args.threshold is not None else model.threshold
    a, b = model.calibration
    predictions = []
    for example in examples:
        logit = model.logit_of(vector_of(example.messages))
        predictions.append(Prediction(example, 1.0 / (1.0 + math.exp(-(a * logit + b))), logit))
    hard, easy = pooled(predictions, threshold)
    print(f"{len(examples)} examples, threshold {threshold:.2f}: hard recall {hard:.1%}, easy {easy:.1%}\n")
    print(per_class(predictions, threshold))
    print()
    print(sweep(predictions))
    wrong = misrouted(predictions, threshold, args.misrouted)
    if wrong:
        print(f"\nMisrouted ({len(wrong)} shown, the most confident first):\n")
        for p in wrong:
            talk = conversation({"messages": p.example.messages})
            text = " ".join(talk.newest.split())
            text = text if len(text) <= 100 else text[:97] + "..."
            top = model.score(talk.newest, talk.system, talk.earlier, explain=3).top
            why = ", ".join(f"{c.feature} {c.weight:+.2f}" for c in top)
            print(f"- {p.example.label}, score {p.score:.2f}: {text}\n    {why}")
    return 0
