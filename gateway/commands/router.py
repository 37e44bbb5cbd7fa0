"""``gateway router train`` and ``gateway router eval``: the difficulty scorer's model, made and measured
(``labels`` and ``threshold``, from shadow evaluation's judged traffic, are in router_shadow.py).

The arguments are parsed here and the work is done by the trainer, ``gateway_training``: a distribution
of its own (training/ in the repository), which the gateway's wheel and image leave out. It is imported
when an action runs, so ``--help`` and every other command work without it, and a missing trainer is a
one-line hint, not a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gateway.commands import router_shadow
from gateway.routing.scorer.linear import DEFAULT_MODEL, ModelError
from gateway.routing.scorer.load import load_model

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
        description=f"Train a scorer model. Needs the training package: {INSTALL}.",
    )
    p.add_argument(
        "--data",
        type=Path,
        action="append",
        default=[],
        metavar="FILE.jsonl",
        help='labelled examples: {"messages": [...], "label": "hard"|"easy"} per line; repeatable',
    )
    p.add_argument("--no-builtin", action="store_true", help="train on the --data files only")
    p.add_argument("--per-source", type=int, default=300, help="examples drawn per built-in source")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--c", type=float, default=None, help="inverse regularisation strength")
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="store this threshold instead of choosing one by leave-one-source-out evaluation",
    )
    p.add_argument(
        "--folds",
        type=int,
        default=12,
        help="hold the sources out in this many groups to choose the threshold (0: one source at a time)",
    )
    p.add_argument("--out", type=Path, required=True, help="the model file to write (.json.gz)")
    p.add_argument("--card", type=Path, help="also write a model card (Markdown): sources, licences, figures")
    p.set_defaults(func=_train)

    p = actions.add_parser(
        "eval",
        help="per-class accuracy, confusion table and threshold sweep (needs the training package)",
        description=f"Evaluate a scorer model on labelled prompts. Needs the training package: {INSTALL}.",
    )
    p.add_argument("--data", type=Path, action="append", required=True, metavar="FILE.jsonl")
    p.add_argument("--model", default=DEFAULT_MODEL, help="a model file (default: the shipped model)")
    p.add_argument("--threshold", type=float, default=None, help="default: the model's")
    p.set_defaults(func=_eval)

    router_shadow.add_actions(actions)


def _train(args: argparse.Namespace) -> int:
    try:
        from gateway_training.card import model_card
        from gateway_training.data import DataError, builtin_examples, load_jsonl
        from gateway_training.fit import FitSettings, choose_threshold, fit, leave_one_source_out
        from gateway_training.report import per_group, sweep
    except ModuleNotFoundError as exc:
        return _missing(exc, "train")

    try:
        examples = [] if args.no_builtin else builtin_examples(args.per_source, args.seed)
        for path in args.data:
            examples.extend(load_jsonl(path))
    except DataError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    if not examples:
        print("gateway: no training examples (give --data, or drop --no-builtin)", file=sys.stderr)
        return 2
    settings = FitSettings(seed=args.seed, **({"c": args.c} if args.c is not None else {}))
    sources = sorted({e.source for e in examples})
    print(f"{len(examples)} examples from {len(sources)} sources")
    held_out = []
    try:
        threshold = args.threshold
        if threshold is None:
            if len(sources) < 2:
                threshold = 0.5
                print("one source only: no leave-one-source-out evaluation; threshold 0.5")
            else:
                held_out = leave_one_source_out(examples, settings, folds=args.folds or None)
                threshold = choose_threshold(held_out)
                how = f"in {args.folds} groups" if 0 < args.folds < len(sources) else "one at a time"
                print(f"\nSources held out {how} (each scored by a model that never saw it):\n")
                print(per_group(held_out, threshold, lambda p: p.example.source, "held-out source"))
                print()
                print(sweep(held_out))
                print(f"\nchosen threshold: {threshold:.2f}")
        model = fit(examples, settings, threshold=threshold)
    except (RuntimeError, ValueError) as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    model.save(args.out)
    size = args.out.stat().st_size
    if args.card:
        args.card.write_text(
            model_card(
                model, examples, held_out, size, args.folds if 0 < args.folds < len(sources) else None
            ),
            encoding="utf-8",
        )
    print(
        f"\nwrote {args.out}: {len(model.heads)} head(s), {model.feature_count} weights, "
        f"{size / 1024:.0f} KiB, threshold {threshold:.2f}"
    )
    return 0


def _eval(args: argparse.Namespace) -> int:
    try:
        from gateway_training.data import DataError, load_jsonl
        from gateway_training.fit import predict
        from gateway_training.report import confusion, per_group, sweep
    except ModuleNotFoundError as exc:
        return _missing(exc, "eval")

    try:
        model = load_model(args.model)
        examples = [e for path in args.data for e in load_jsonl(path)]
    except (ModelError, DataError) as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    threshold = args.threshold if args.threshold is not None else model.threshold
    predictions = predict(model, examples)
    print(f"{len(examples)} examples, threshold {threshold:.2f}\n")
    print(per_group(predictions, threshold, lambda p: p.example.category, "class"))
    print()
    print(confusion(predictions, threshold))
    print()
    print(sweep(predictions))
    return 0
