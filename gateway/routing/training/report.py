"""Plain-text reports of a scorer's predictions: per class, per source, confusion, threshold sweep."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from gateway.routing.decision import BackendView, RouteInput, decide
from gateway.routing.features import extract_features
from gateway.routing.settings import RoutingSettings
from gateway.routing.training.fit import Prediction, recall

__all__ = ["confusion", "per_group", "structural", "sweep", "under_policy"]


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
    in the gateway (README Routing: the rules come first, the score decides the rest)."""
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
