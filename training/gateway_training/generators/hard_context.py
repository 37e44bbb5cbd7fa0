# ruff: noqa: E501 (prompt templates read best as one line each)
"""Requests that are hard because of their context, not their newest turn: a hard task stated only in the
system prompt, or a follow-up turn after a hard one, belongs on the autoregressive backend.

- gen:system-task: the problem sits in the system prompt (a tutoring app, a puzzle bot, an exam
  checker) and the user turn is a bare "go" or "give me a hint".
- gen:followup-chain: several hard exchanges, then a terse follow-up in the newest turn.
- gen:bot-task: a hard problem in the newest turn, sent to a bot whose operator's system prompt is a
  list of rules (the easy gen:bot-operators' prompts): such a prompt sits above small talk in the easy
  sources, and with a head per group of categories the small-talk head read it as small talk whatever
  the turn said ("Three runners finish: Ana is not first..." under a running club's bot is still a
  puzzle).

All three borrow their problems from the other hard families, so holding one of them out tests whether the
scorer reads the context, not whether it knows a puzzle's wording.
"""

from __future__ import annotations

import random

from gateway_training.generators import (
    easy_bot_operators,
    hard_analysis,
    hard_deduction,
    hard_math,
    hard_time,
    hard_tracking,
    hard_words,
)
from gateway_training.generators.hard_common import LICENCE, Messages, pick, strip_ask
from gateway_training.sources import Source

__all__ = ["SOURCES"]

_PROBLEM_SOURCES: tuple[Source, ...] = (
    *hard_deduction.SOURCES,
    *hard_tracking.SOURCES,
    *hard_time.SOURCES,
    *hard_words.SOURCES,
    *hard_analysis.SOURCES,
    *hard_math.SOURCES,
)


def _problem(rng: random.Random) -> str:
    """The first user turn of a draw from another hard family."""
    messages = pick(rng, _PROBLEM_SOURCES).draw(rng)
    return strip_ask(str(next(m["content"] for m in messages if m["role"] == "user")))


_SYSTEM_FRAMES = (
    "You are a tutor in a homework app. The student is working on this problem:\n\n{p}\n\nDo not just give the answer; guide them.",
    "Solve the following task and reply with the final answer only.\n\nTask: {p}",
    "You are PuzzleBot. Today's puzzle is:\n{p}\nUsers will ask about it. Check their answers carefully.",
    "Context for this conversation (an exam question the user must answer):\n---\n{p}\n---\nGrade the user's answer and explain any mistake.",
    "You help a teacher prepare answer keys. Current question: {p}",
    "## Task\n{p}\n\n## Rules\nThink it through before answering. Be exact.",
)
_TERSE_USER = (
    "go", "solve it", "ok, what's the answer?", "Give me a hint.", "I think the answer is the second option, am I right?",
    "start", "answer please", "I got 12, is that correct?", "can you check my answer: the last one", "Where do I begin?",
    "hmm, I'm stuck at the second step", "what's the trick here?", "Ready.", "next step?", "is my reasoning ok? I just guessed",
)  # fmt: skip


def _system_task(rng: random.Random) -> Messages:
    system = pick(rng, _SYSTEM_FRAMES).format(p=_problem(rng))
    messages: Messages = [{"role": "system", "content": system}]
    if rng.random() < 0.3:
        messages.append({"role": "user", "content": pick(rng, ("hi", "Hello!", "hey there", "ok I'm here"))})
        messages.append(
            {
                "role": "assistant",
                "content": pick(
                    rng,
                    (
                        "Hi! Ready when you are.",
                        "Hello! Shall we start with the problem?",
                        "Hey! Let's look at today's question.",
                    ),
                ),
            }
        )
    messages.append({"role": "user", "content": pick(rng, _TERSE_USER)})
    return messages


_MIDDLE_ANSWERS = (
    "Let's work through it. First, list what we know; then combine the constraints one at a time. Doing that, the answer comes out as stated below, and each step can be checked against the conditions.",
    "Here is my reasoning step by step, checking each condition along the way. The result follows once the second constraint is applied.",
    "Short version: after combining the facts in order, only one possibility survives. Details below if you want them.",
)
_LATE_FOLLOWUPS = (
    "and the next one?", "same again but with the numbers swapped", "why?", "are you sure?", "what about the edge case?",
    "ok now explain step 3", "now prove it", "do the same for the second one", "wait, that contradicts what you said before",
    "can you double-check the last part?", "and if we change one condition?", "now do it for 5 people", "faster way?",
    "ok", "hm, and the other way round?", "so which one is it finally?", "redo it, I changed my mind about the second rule",
)  # fmt: skip


def _followup_chain(rng: random.Random) -> Messages:
    messages: Messages = []
    if rng.random() < 0.2:
        messages.append(
            {
                "role": "system",
                "content": pick(
                    rng, ("You are a helpful assistant.", "Answer carefully and show your reasoning.")
                ),
            }
        )
    for _ in range(rng.randint(1, 3)):
        messages.append({"role": "user", "content": _problem(rng)})
        messages.append({"role": "assistant", "content": pick(rng, _MIDDLE_ANSWERS)})
    messages.append({"role": "user", "content": pick(rng, _LATE_FOLLOWUPS)})
    return messages


def _bot_task(rng: random.Random) -> Messages:
    messages: Messages = [{"role": "system", "content": easy_bot_operators.operator_prompt(rng)}]
    if rng.random() < 0.3:
        messages.append({"role": "user", "content": pick(rng, ("hi!", "hey", "good morning", "hello there"))})
        messages.append({"role": "assistant", "content": pick(rng, ("Hi! How can I help?", "Hello! 😊"))})
    lead = pick(rng, ("", "", "quick one: ", "my kid brought this home, ", "settle a bet for us: "))
    messages.append({"role": "user", "content": lead + _problem(rng)})
    return messages


SOURCES: tuple[Source, ...] = (
    Source("gen:system-task", "hard", "reasoning", LICENCE, _system_task),
    Source("gen:followup-chain", "hard", "reasoning", LICENCE, _followup_chain),
    Source("gen:bot-task", "hard", "reasoning", LICENCE, _bot_task),
)
