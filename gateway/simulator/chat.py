"""The simulator's chat completions and completions wire format, as vLLM 0.33 writes it: whole bodies,
``data: {json}`` chunks (one per diffusion canvas or per token), the final chunk and the usage-only chunk.
A request in the Responses or Messages dialect gets its writer from wire.py, fed the same deltas."""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson

from gateway.simulator.plan import Plan
from gateway.simulator.wire import MessagesWriter, ResponsesWriter, Writer
from gateway.wire import Endpoint

__all__ = ["Ids", "ar_pieces", "sse"]


def sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def ar_pieces(plan: Plan) -> list[dict[str, Any]]:
    """Deltas for the autoregressive kind: one token each; a tool call as name, then argument pieces."""
    pieces: list[dict[str, Any]] = [{"reasoning": t} for t in plan.reasoning]
    pieces += [{"content": t} for t in plan.content]
    if plan.tool_call is not None:
        call = plan.tool_call
        pieces.append(
            {
                "tool_calls": [
                    {
                        "id": call["id"],
                        "type": "function",
                        "index": 0,
                        "function": {"name": call["name"], "arguments": ""},
                    }
                ]
            }
        )
        args = call["arguments"]
        for i in range(0, len(args), 8):
            pieces.append({"tool_calls": [{"index": 0, "function": {"arguments": args[i : i + 8]}}]})
    if not pieces:
        pieces.append({"content": ""})
    pieces[0] = {"role": "assistant", **pieces[0]}
    return pieces


class Ids:
    """Builds vLLM's response objects for one request."""

    def __init__(self, *, chat: bool, model: str, dialect: Endpoint = "chat") -> None:
        self.id = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex
        self.model = model
        self.created = int(time.time())
        # The Responses and Messages dialects are written from the same deltas (simulator/wire.py).
        self.writer: Writer | None = None
        if dialect == "responses":
            self.writer = ResponsesWriter(model)
        elif dialect == "messages":
            self.writer = MessagesWriter(model)

    def _head(self, obj: str) -> dict[str, Any]:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model}

    def full(self, plan: Plan, chat: bool) -> dict[str, Any]:
        if not chat:
            choice: dict[str, Any] = {
                "index": 0,
                "text": "".join(plan.content),
                "logprobs": None,
                "finish_reason": plan.finish_reason,
                "stop_reason": None,
            }
            return {**self._head("text_completion"), "choices": [choice], "usage": plan.usage()}
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(plan.content) if plan.tool_call is None else None,
            "reasoning": "".join(plan.reasoning) or None,
            "tool_calls": [],
        }
        if plan.tool_call is not None:
            call = plan.tool_call
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
            ]
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": plan.finish_reason,
            "stop_reason": None,
        }
        return {**self._head("chat.completion"), "choices": [choice], "usage": plan.usage()}

    def chunks(self, plan: Plan, chat: bool, kind: str) -> list[bytes]:
        if kind == "diffusion":
            deltas = [self._canvas_delta(plan, i) for i in range(len(plan.canvases))]
        else:
            deltas = ar_pieces(plan)
        if self.writer is not None:
            chunks = [self.writer.delta(delta) for delta in deltas]
            chunks[0] = self.writer.start(plan) + chunks[0]
            return chunks
        return [sse(self._chunk(delta, chat)) for delta in deltas]

    def _canvas_delta(self, plan: Plan, index: int) -> dict[str, Any]:
        canvas = plan.canvases[index]
        delta: dict[str, Any] = {"role": "assistant"} if index == 0 else {}
        if canvas.reasoning:
            delta["reasoning"] = "".join(canvas.reasoning)
        if canvas.content or (not canvas.reasoning and not canvas.tool_call):
            delta["content"] = "".join(canvas.content)
        if canvas.tool_call and plan.tool_call is not None:
            call = plan.tool_call
            delta["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "index": 0,
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
            ]
        return delta

    def _chunk(self, delta: dict[str, Any], chat: bool, finish: str | None = None) -> dict[str, Any]:
        if chat:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**self._head("chat.completion.chunk"), "choices": [choice]}
        text = delta.get("content", "")
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        return {**self._head("text_completion"), "choices": [choice]}

    def final_chunk(self, plan: Plan, chat: bool) -> dict[str, Any]:
        return self._chunk({"content": ""} if chat else {}, chat, plan.finish_reason)

    def usage_chunk(self, plan: Plan, chat: bool) -> dict[str, Any]:
        obj = "chat.completion.chunk" if chat else "text_completion"
        return {**self._head(obj), "choices": [], "usage": plan.usage()}
