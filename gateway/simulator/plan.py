"""What one simulated request will answer, decided up front from the request alone (deterministic)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.simulator.quality import WEAK, hidden_hard, judge_reply
from gateway.simulator.settings import SimulatorSettings
from gateway.simulator.text import count_prompt_tokens, make_rng, tool_arguments, words

__all__ = ["Canvas", "Plan", "make_plan"]


@dataclass(slots=True)
class Canvas:
    """One diffusion block: the tokens it commits and the denoising steps it took."""

    reasoning: list[str]
    content: list[str]
    steps: int
    tool_call: bool = False


@dataclass(slots=True)
class Plan:
    prompt_tokens: int
    reasoning: list[str]
    content: list[str]
    tool_call: dict[str, Any] | None
    finish_reason: str
    canvas_length: int
    canvases: list[Canvas] = field(default_factory=list)

    @property
    def tool_tokens(self) -> int:
        if self.tool_call is None:
            return 0
        return 4 + len(self.tool_call["arguments"]) // 4

    @property
    def completion_tokens(self) -> int:
        return len(self.reasoning) + len(self.content) + self.tool_tokens

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "completion_tokens": self.completion_tokens,
            "prompt_tokens_details": None,
            "completion_tokens_details": {"reasoning_tokens": len(self.reasoning)},
        }


def _thinking(payload: dict[str, Any]) -> bool:
    kwargs = payload.get("chat_template_kwargs")
    return isinstance(kwargs, dict) and kwargs.get("enable_thinking") is True


def _tool_to_call(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The tool the model calls: offered tools, ``tool_choice`` not "none", and not just after a result."""
    tools = payload.get("tools")
    if not isinstance(tools, list) or not tools or payload.get("tool_choice") == "none":
        return None
    messages = payload.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    if isinstance(last, dict) and last.get("role") == "tool":
        return None  # the agent loop's last turn: answer in words
    choice = payload.get("tool_choice")
    wanted = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and (wanted is None or function.get("name") == wanted):
            return function
    return None


def _max_tokens(payload: dict[str, Any]) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = payload.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def make_plan(
    payload: dict[str, Any], settings: SimulatorSettings, request_seed: str, rough: str | None = None
) -> Plan:
    rng = make_rng(settings.kind, request_seed)
    function = _tool_to_call(payload)
    reasoning = words(rng, rng.randint(40, 160)) if _thinking(payload) else []
    content: list[str] = [] if function is not None else words(rng, rng.randint(24, 180))
    if settings.kind == "autoregressive":
        verdict = judge_reply(payload, settings.judge_position_bias, settings.judge_unparsable)
        content = verdict if verdict is not None else content
    elif content and hidden_hard(payload):
        content = [*content, *WEAK]  # simulator/quality.py: the diffusion kind answers these worse
    tool_call = None
    if function is not None:
        args = tool_arguments(function.get("parameters"), rng)
        tool_call = {
            "id": f"chatcmpl-tool-{rng.getrandbits(64):016x}",
            "name": str(function.get("name", "tool")),
            "arguments": orjson.dumps(args).decode(),
        }
    if rough is not None:
        content, reasoning, tool_call = _roughen(rough, content or words(rng, 30), reasoning, tool_call)
    finish = "tool_calls" if tool_call is not None else "stop"
    limit = _max_tokens(payload)
    if limit is not None and len(reasoning) + len(content) > limit:
        reasoning = reasoning[:limit]
        content = content[: max(0, limit - len(reasoning))]
        finish = "length"

    canvas_length = settings.canvas_length
    xargs = payload.get("vllm_xargs") if isinstance(payload.get("vllm_xargs"), dict) else {}
    asked_canvas = xargs.get("diffusion_canvas_length") if xargs else None
    if isinstance(asked_canvas, int) and 1 <= asked_canvas <= settings.canvas_length:
        canvas_length = asked_canvas
    plan = Plan(
        prompt_tokens=count_prompt_tokens(payload),
        reasoning=reasoning,
        content=content,
        tool_call=tool_call,
        finish_reason=finish,
        canvas_length=canvas_length,
    )
    if settings.kind == "diffusion":
        max_steps = settings.max_denoising_steps
        asked_steps = xargs.get("diffusion_max_steps") if xargs else None
        if isinstance(asked_steps, int):
            max_steps = min(max(asked_steps, 1), settings.max_denoising_steps)  # can only lower it
        plan.canvases = _canvases(plan, rng, max_steps)
    return plan


def _roughen(
    rough: str, content: list[str], reasoning: list[str], tool_call: dict[str, Any] | None
) -> tuple[list[str], list[str], dict[str, Any] | None]:
    """Turn a good answer into the kind of rough one the diffusion backend has been seen to give."""
    if rough == "markup":
        return ["<|channel>", "thought", *content], reasoning, tool_call
    if rough == "empty":
        return [], reasoning, None
    if rough == "repetition":
        return [" the", " same", " words", " again"] * 20, reasoning, None
    if rough == "no_tool":
        return content, reasoning, None
    if tool_call is not None and rough == "tool_json":
        return [], reasoning, {**tool_call, "arguments": tool_call["arguments"][:-2]}
    if tool_call is not None and rough == "tool_args":
        return [], reasoning, {**tool_call, "arguments": "{}"}
    return content, reasoning, tool_call


def _canvases(plan: Plan, rng: Any, max_steps: int) -> list[Canvas]:
    tokens = [("r", t) for t in plan.reasoning] + [("c", t) for t in plan.content]
    n = max(1, math.ceil((len(tokens) + plan.tool_tokens) / plan.canvas_length))
    canvases = []
    for i in range(n):
        block = tokens[i * plan.canvas_length : (i + 1) * plan.canvas_length]
        # The entropy-bound sampler stops early once the canvas is confident: about a third to all steps.
        steps = min(max_steps, max(1, rng.randint(max_steps // 3, max_steps)))
        canvases.append(
            Canvas(
                reasoning=[t for k, t in block if k == "r"],
                content=[t for k, t in block if k == "c"],
                steps=steps,
                tool_call=plan.tool_call is not None and i == n - 1,
            )
        )
    return canvases
