"""What the simulator's answers are worth: a hidden rule of its own for the requests the diffusion kind
answers worse, the mark such an answer carries, and the autoregressive kind's verdicts on a judge's prompt.

A real diffusion model answers some requests worse than an autoregressive one, and which ones is what the
gateway's router has to learn from shadow evaluation (docs/shadow.md). The simulator stands in with a rule
the difficulty scorer was never trained on: a request whose newest user turn names one of ``HIDDEN_HARD``'s
words (money and law: escrow, probate, amortization...) gets a weaker answer from the diffusion kind, one
that ends in ``WEAK``, a phrase its vocabulary never writes otherwise. The scorer calls such requests easy,
so they go to diffusion: regret that shadow evaluation measures, and that retraining on its labels removes.

A request whose newest user turn holds an ``<answer_a>`` and an ``<answer_b>`` element is a judge's prompt
(gateway/shadow/judge.py writes them). The autoregressive kind answers it as a judge would, with a JSON
verdict derived from the marks: the answer without ``WEAK`` is better, ``same`` when both or neither carry
it. As a real judge does, it sometimes prefers whichever answer comes first: a share
(``judge_position_bias``) of judge prompts, chosen by a hash of the prompt, is answered ``A`` whatever it
holds, so that the same pair asked in both orders disagrees; and a share (``judge_unparsable``) is
answered in prose, which the gateway cannot parse.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from gateway.simulator.text import make_rng, text_of

__all__ = ["HIDDEN_HARD", "WEAK", "hidden_hard", "judge_reply", "weak"]

HIDDEN_HARD = frozenset(
    {
        "amortization",
        "amortisation",
        "annuity",
        "annuities",
        "escrow",
        "fiduciary",
        "indemnity",
        "lien",
        "liens",
        "probate",
        "reinsurance",
        "subrogation",
    }
)
# The weaker answer's last sentence, as tokens (each with its leading space).
WEAK = (" I", " might", " be", " wrong", " here", ".")
_WEAK_TEXT = "".join(WEAK).strip()
_WORD = re.compile(r"[a-z]+")
_ANSWER = {tag: re.compile(rf"<{tag}>(.*?)</{tag}>", re.S) for tag in ("answer_a", "answer_b")}


def _newest_user_text(view: dict[str, Any]) -> str:
    messages = view.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return text_of(message.get("content"))
        return ""
    prompt = view.get("prompt")
    return prompt if isinstance(prompt, str) else ""


def hidden_hard(view: dict[str, Any]) -> bool:
    """Whether the diffusion kind answers this request worse."""
    return not HIDDEN_HARD.isdisjoint(_WORD.findall(_newest_user_text(view).lower()))


def weak(answer: str) -> bool:
    return _WEAK_TEXT in answer


def judge_reply(view: dict[str, Any], position_bias: float, unparsable: float) -> list[str] | None:
    """The tokens of a judge's answer when ``view`` is a judge's prompt, else None."""
    text = _newest_user_text(view)
    found = {tag: pattern.search(text) for tag, pattern in _ANSWER.items()}
    first, second = found["answer_a"], found["answer_b"]
    if first is None or second is None:
        return None
    draw = make_rng("judge", text).random()
    if draw < unparsable:
        reply = "Both answers have merit, but I would lean towards the first one."
    else:
        a, b = weak(first.group(1)), weak(second.group(1))
        if draw < unparsable + position_bias:
            verdict, reason = "A", "The first answer reads better."
        elif a == b:
            verdict, reason = "same", "Both answers are of the same quality."
        else:
            verdict = "B" if a else "A"
            reason = f"Answer {'A' if a else 'B'} hedges instead of answering."
        reply = orjson.dumps({"verdict": verdict, "reason": reason}).decode()
    head, *rest = reply.split(" ")
    return [head, *(" " + word for word in rest)]
