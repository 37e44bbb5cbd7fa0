"""Plain-text reports of a scorer's predictions: per class, per source, confusion, threshold sweep."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from gateway.routing.decision import BackendView, RouteInput, decide
from gateway.routing.features import extract_features
from gateway.routing.settings import RoutingSettings
from gateway_training.fit import Prediction, recall

__all__ = ["TARGETS", "confusion", "per_group", "structural", "sweep", "targets", "under_policy"]


_BACKENDS = (
    BackendView(name="diffusion", kind="diffusion", model="diffusion", max_concurrency=4),
    BackendView(name="autoregressive", kind="autoregressive", model="autoregressive", max_concurrency=256),
)


def structural(messages: list[dict[str, object]]) -> bool:
    """Whether the routing policy sends this conversation to the autoregressive backend with no score at
    all: its structural rules (code in the text, an agent loop, an image, ...), decided by the policy
    itself (``decide`` with the scorer off), for a chat request with these messages and nothing else."""
    features = extract_features({"messages": messages}, "chat")
    decision = decide(RouteInput(model="auto", features=features), _BACKENDS, RoutingSettings())
    return decision.candidates[0] == "autoregressive"


def under_policy(predictions: Sequence[Prediction]) -> list[Prediction]:
    """The predictions as the routing policy uses them: a conversation the structural rules send to the
    autoregressive backend counts as scored 1.0, whatever the scorer said. What a class's requests meet
    in the gateway (docs/routing.md: the rules come first, the score decides the rest)."""
    return [Prediction(p.example, 1.0) if structural(p.example.messages) else p for p in predictions]


def _right(p: Prediction, threshold: float) -> bool:
    return (p.score >= threshold) == (p.example.label == "hard")


def per_group(
    predictions: Sequence[Prediction], threshold: float, key: Callable[[Prediction], str], title: str
) -> str:
    groups: dict[str, list[Prediction]] = defaultdict(list)
    for p in predictions:
        groups[key(p)].append(p)
    lines = [f"| {title} | label | n | routed as labelled |", "|---|---|---:|---:|"]
    for name in sorted(groups, key=lambda g: (groups[g][0].example.label, g)):
        rows = groups[name]
        right = sum(_right(p, threshold) for p in rows)
        label = rows[0].example.label
        target = "autoregressive" if label == "hard" else "diffusion"
        lines.append(f"| {name} | {label} (to {target}) | {len(rows)} | {right / len(rows):.1%} |")
    return "\n".join(lines)


def confusion(predictions: Sequence[Prediction], threshold: float) -> str:
    cells = {(a, b): 0 for a in ("hard", "easy") for b in ("hard", "easy")}
    for p in predictions:
        cells[(p.example.label, "hard" if p.score >= threshold else "easy")] += 1
    return "\n".join(
        [
            "| labelled \\ scored | hard (autoregressive) | easy (diffusion) |",
            "|---|---:|---:|",
            f"| hard | {cells[('hard', 'hard')]} | {cells[('hard', 'easy')]} |",
            f"| easy | {cells[('easy', 'hard')]} | {cells[('easy', 'easy')]} |",
        ]
    )


def sweep(predictions: Sequence[Prediction], thresholds: Sequence[float] | None = None) -> str:
    steps = thresholds or [t / 10 for t in range(1, 10)]
    lines = ["| threshold | hard recall | easy recall | to autoregressive |", "|---:|---:|---:|---:|"]
    for t in steps:
        share = sum(p.score >= t for p in predictions) / max(1, len(predictions))
        lines.append(
            f"| {t:.2f} | {recall(predictions, t, 'hard'):.1%} | {recall(predictions, t, 'easy'):.1%} "
            f"| {share:.1%} |"
        )
    return "\n".join(lines)


# The routing targets for the built-in classes, held out: the share of each class routed as labelled.
TARGETS = {
    "reasoning": 0.95,
    "math-word": 0.95,
    "math": 0.95,
    "code": 1.0,
    "smalltalk": 0.97,
    "factual": 0.97,
    "transform": 0.97,
}


def targets(predictions: Sequence[Prediction], goals: dict[str, float] | None = None) -> str:
    """Where each class meets its target as the threshold moves (0.01 to 0.99), and what the other
    classes read there: whether one threshold meets them all, and what each target costs the others.

    A hard class meets its target up to some threshold, an easy one from some threshold on (a higher
    threshold keeps more on diffusion); each row gives that edge and the classes short of their own
    targets at it. Pass the predictions as routed (``under_policy``) for what the gateway does; "" when
    no class has a target."""
    goals = TARGETS if goals is None else goals
    by_class: dict[str, list[Prediction]] = defaultdict(list)
    for p in predictions:
        if p.example.category in goals:
            by_class[p.example.category].append(p)
    if not by_class:  # an operator's data: labels, no classes with targets
        return ""
    grid = [step / 100 for step in range(1, 100)]
    share = {
        (name, t): sum(_right(p, t) for p in rows) / len(rows)
        for name, rows in by_class.items()
        for t in grid
    }

    def met(name: str, t: float) -> bool:
        return share[(name, t)] >= goals[name] - 1e-12

    lines = [
        "| class | target | met at thresholds | at the edge, short of their targets |",
        "|---|---:|---|---|",
    ]
    for name in sorted(by_class, key=lambda n: (by_class[n][0].example.label, n)):
        hard = by_class[name][0].example.label == "hard"
        where = [t for t in grid if met(name, t)]
        if not where:
            lines.append(
                f"| {name} | {goals[name]:.0%} | none (at best {max(share[(name, t)] for t in grid):.1%}) | |"
            )
            continue
        edge = max(where) if hard else min(where)
        short = ", ".join(
            f"{other} {share[(other, edge)]:.1%}" for other in sorted(by_class) if not met(other, edge)
        )
        span = f"up to {edge:.2f}" if hard else f"from {edge:.2f}"
        lines.append(f"| {name} | {goals[name]:.0%} | {span} | {short or 'none'} |")
    every = _spans([t for t in grid if all(met(name, t) for name in by_class)])
    lines += ["", f"Every target met at once: {every or 'at no threshold'}."]
    if not every:  # which target stands in the way: the others met together without it
        for name in sorted(by_class):
            rest = _spans([t for t in grid if all(met(o, t) for o in by_class if o != name)])
            if rest:
                lines.append(f"Every target but {name}'s: {rest}.")
    return "\n".join(lines)


def _spans(grid: Sequence[float]) -> str:
    """Thresholds on the 0.01 grid as runs: "0.52-0.55, 0.58"."""
    runs: list[list[float]] = []
    for t in grid:
        if runs and round(t - runs[-1][-1], 2) <= 0.01:
            runs[-1].append(t)
        else:
            runs.append([t])
    return ", ".join(f"{r[0]:.2f}-{r[-1]:.2f}" if len(r) > 1 else f"{r[0]:.2f}" for r in runs)
