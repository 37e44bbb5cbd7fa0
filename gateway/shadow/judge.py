"""The judge: a model compares the two answers to one request, asked in both orders.

Its prompt shows the request and two answers as ``A`` and ``B``, never which backend wrote which, and asks
for one strict JSON object, ``{"verdict": "A" | "B" | "same", "reason": "..."}``: nothing around it, no
other key. It is asked twice, the diffusion answer as ``A`` and then as ``B``; each reading becomes a
verdict on the diffusion answer (``same``, ``diffusion_worse``, ``diffusion_better``), and the verdict counts
only when both readings agree. A judge that prefers whichever answer it reads first (a known bias of model
judges) disagrees with itself and is discarded (``inconsistent``), as is an answer that is not such an
object (``unparsable``, a verdict cut by its token limit included) and a judge request that failed
(``judge_failed``). A judge backend without room (its load share, its token budget) skips the pair.

The answers and the request are the clients' text inside the judge's prompt: the tags that delimit them are
defused in that text, so that an answer cannot close its element and write a verdict of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from gateway.shadow.budget import Gate
from gateway.shadow.calls import Caller, CallFailed, Reply
from gateway.shadow.settings import JudgeSettings
from gateway.upstream.settings import BackendSettings

__all__ = ["DISCARDS", "SYSTEM", "VERDICTS", "Judge", "Judgement", "combine", "judge_messages", "parse"]

VERDICTS = ("same", "diffusion_worse", "diffusion_better")
DISCARDS = ("judge_failed", "unparsable", "inconsistent")
SYSTEM = (
    "You compare two answers to the same request. Decide which one serves the request better: correctness "
    "first, then completeness and clarity; length and style only where they make an answer worse. Reply "
    'with one JSON object and nothing else: {"verdict": "A", "B" or "same", "reason": "at most twenty '
    'words"}. Use "same" when neither answer is clearly better.'
)
_TAGS = ("request", "answer_a", "answer_b")
_REASON_CHARS = 300


@dataclass(frozen=True, slots=True)
class Judgement:
    """A verdict (VERDICTS) with the judge's reason; or why there is none: ``skipped`` (busy, budget: the
    judge was not asked) or ``discarded`` (DISCARDS)."""

    verdict: str | None = None
    reason: str = ""
    skipped: str | None = None
    discarded: str | None = None
    seconds: float = 0.0
    tokens: int = 0
    asked: int = 0  # judge requests sent


def _defused(text: str) -> str:
    for tag in _TAGS:
        text = text.replace(f"<{tag}>", f"< {tag}>").replace(f"</{tag}>", f"</ {tag}>")
    return text


def judge_messages(request: str, first: str, second: str) -> list[dict[str, str]]:
    user = (
        f"<request>\n{_defused(request)}\n</request>\n\n"
        f"<answer_a>\n{_defused(first)}\n</answer_a>\n\n"
        f"<answer_b>\n{_defused(second)}\n</answer_b>"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse(reply: Reply) -> tuple[str, str] | None:
    """``("A" | "B" | "same", reason)`` from a judge's reply, or None when it is not the strict object."""
    if reply.finish_reason == "length":
        return None
    try:
        obj = orjson.loads(reply.text.strip())
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or set(obj) - {"verdict", "reason"}:
        return None
    verdict, reason = obj.get("verdict"), obj.get("reason", "")
    if verdict not in ("A", "B", "same") or not isinstance(reason, str):
        return None
    return verdict, reason[:_REASON_CHARS]


def _on_diffusion(letter: str, diffusion_first: bool) -> str:
    if letter == "same":
        return "same"
    better = "A" if diffusion_first else "B"
    return "diffusion_better" if letter == better else "diffusion_worse"


def combine(first: str, second: str) -> str | None:
    """The verdict on the diffusion answer from the reading with it as A (``first``) and as B
    (``second``), or None when the two disagree."""
    a, b = _on_diffusion(first, True), _on_diffusion(second, False)
    return a if a == b else None


class Judge:
    def __init__(self, caller: Caller, backend: BackendSettings, gate: Gate, settings: JudgeSettings) -> None:
        self.backend = backend
        self._caller = caller
        self._gate = gate
        self._settings = settings

    async def compare(self, request: str, diffusion: str, autoregressive: str) -> Judgement:
        """The verdict on ``diffusion`` against ``autoregressive``, both answers to ``request``."""
        seconds, tokens, asked = 0.0, 0, 0
        letters: list[str] = []
        reason = ""
        for first, second in ((diffusion, autoregressive), (autoregressive, diffusion)):
            messages = judge_messages(request, first, second)
            ticket, busy = self._gate.enter(self.backend.name, self._estimate(messages))
            if ticket is None:
                # A pair half judged is no verdict: it counts as skipped, with what it already cost.
                return Judgement(skipped=busy, seconds=seconds, tokens=tokens, asked=asked)
            asked += 1
            try:
                reply = await self._caller.ask(self.backend, "chat", self._payload(messages))
            except CallFailed as exc:
                ticket.settle(0)
                seconds += exc.seconds
                return Judgement(discarded="judge_failed", seconds=seconds, tokens=tokens, asked=asked)
            finally:
                self._gate.leave(self.backend.name)
            ticket.settle(reply.tokens)
            seconds += reply.seconds
            tokens += reply.tokens
            parsed = parse(reply)
            if parsed is None:
                return Judgement(discarded="unparsable", seconds=seconds, tokens=tokens, asked=asked)
            letters.append(parsed[0])
            reason = reason or parsed[1]
        verdict = combine(letters[0], letters[1])
        if verdict is None:
            return Judgement(discarded="inconsistent", seconds=seconds, tokens=tokens, asked=asked)
        return Judgement(verdict=verdict, reason=reason, seconds=seconds, tokens=tokens, asked=asked)

    def _payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "messages": messages,
            "max_tokens": self._settings.max_tokens,
            "chat_template_kwargs": {"enable_thinking": False},
        }
        if self.backend.kind != "diffusion":  # the diffusion backend refuses both (docs/backends.md)
            payload["temperature"] = 0
            payload["response_format"] = {"type": "json_object"}
        return payload

    def _estimate(self, messages: list[dict[str, str]]) -> int:
        """Tokens a judge request may spend at most: its prompt (about four characters a token) and the
        verdict's limit."""
        return sum(len(m["content"]) for m in messages) // 4 + self._settings.max_tokens
