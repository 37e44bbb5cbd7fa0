"""An OpenAI-SDK tool loop through the gateway, printing where each turn went and why.

    pip install openai
    python examples/agent_loop.py --base-url http://127.0.0.1:8080/v1 --api-key gw-...

The model is ``auto``: the gateway decides per turn. Turns that offer tools, or that carry a tool result
back to the model, go to the autoregressive backend (``tool-heavy:tools``, ``tool-heavy:agent-loop``):
the diffusion model is weaker at agentic tool use. Once the exchange is over, a chit-chat turn that offers
no tools goes to the fast diffusion backend (``default:score=0.03``: the difficulty scorer found it
easy). The ``x-gateway-*`` response headers say so on every turn; an agent framework that always sends
its whole tool list keeps every turn on the autoregressive backend, which is the safe choice.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from typing import Any

from openai import OpenAI

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City name"}},
                "required": ["city"],
            },
        },
    }
]


def get_weather(city: str) -> str:
    """A stand-in for a real weather API."""
    return json.dumps({"city": city, "temperature_c": 18, "sky": "light clouds"})


IMPLEMENTATIONS = {"get_weather": get_weather}


@dataclass
class Step:
    """One model call: what was asked of the model, and where the gateway sent it."""

    kind: str  # "tool_call" | "answer"
    backend: str
    route: str
    fallback: str | None
    detail: str  # the tool call, or the answer's text


def _call(client: OpenAI, model: str, messages: list[dict[str, Any]], tools: bool) -> tuple[Any, Step]:
    extra: dict[str, Any] = {"tools": TOOLS} if tools else {}
    raw = client.chat.completions.with_raw_response.create(model=model, messages=messages, **extra)  # type: ignore[arg-type]
    reply = raw.parse()
    message = reply.choices[0].message
    step = Step(
        kind="tool_call" if message.tool_calls else "answer",
        backend=raw.headers.get("x-gateway-backend", "?"),
        route=raw.headers.get("x-gateway-route", "?"),
        fallback=raw.headers.get("x-gateway-fallback"),
        detail=(
            ", ".join(f"{c.function.name}({c.function.arguments})" for c in message.tool_calls)
            if message.tool_calls
            else message.content or ""
        ),
    )
    return message, step


def run(
    client: OpenAI, question: str, follow_up: str, *, model: str = "auto", max_turns: int = 5
) -> list[Step]:
    """Ask ``question`` with tools until the model answers, then send ``follow_up`` without tools."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant. Use the tools when they help."},
        {"role": "user", "content": question},
    ]
    steps: list[Step] = []
    for _ in range(max_turns):
        message, step = _call(client, model, messages, tools=True)
        steps.append(step)
        if not message.tool_calls:
            messages.append({"role": "assistant", "content": message.content or ""})
            break
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments or "{}")
            result = IMPLEMENTATIONS[call.function.name](**arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    # The tool exchange is over: a chit-chat turn needs no tools, so none are offered.
    messages.append({"role": "user", "content": follow_up})
    _, step = _call(client, model, messages, tools=False)
    steps.append(step)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"))
    parser.add_argument(
        "--api-key", default=os.environ.get("OPENAI_API_KEY"), required="OPENAI_API_KEY" not in os.environ
    )
    parser.add_argument("--model", default="auto")
    parser.add_argument("--question", default="What's the weather like in Lisbon right now?")
    parser.add_argument("--follow-up", default="Thanks! Have a lovely day.")
    args = parser.parse_args()
    client = OpenAI(base_url=args.base_url, api_key=args.api_key)
    for number, step in enumerate(run(client, args.question, args.follow_up, model=args.model), 1):
        fallback = f"  fallback: {step.fallback}" if step.fallback else ""
        print(f"turn {number}: {step.kind:9} -> {step.backend:14} route: {step.route}{fallback}")
        print(f"         {step.detail[:200]}")


if __name__ == "__main__":
    main()
