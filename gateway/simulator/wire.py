"""The simulator's Responses API and Anthropic Messages API wire formats, as vLLM 0.33 serves them.

The answer itself (a :class:`Plan`) is decided as for chat completions; this module only writes it in the
other two dialects: whole bodies, and streams of named events (``event: <type>`` + ``data: {json}``),
with one delta per diffusion canvas or per token, exactly as the chat stream is cut. Responses streams end
with ``response.completed`` and Anthropic streams with ``message_stop``; neither sends ``[DONE]``.
"""

from __future__ import annotations

import time
import uuid
from abc import ABC, abstractmethod
from typing import Any

import orjson

from gateway.simulator.plan import Plan

__all__ = ["MessagesWriter", "ResponsesWriter", "Writer"]

_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _event(name: str, body: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps({"type": name, **body}) + b"\n\n"


class Writer(ABC):
    """Turns a plan's deltas (the chat stream's, one per canvas or token) into one dialect's events."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.created = int(time.time())
        self._open: str | None = None  # reasoning | content | tool

    @abstractmethod
    def body(self, plan: Plan) -> dict[str, Any]:
        """The whole answer, non-streaming."""

    @abstractmethod
    def start(self, plan: Plan) -> bytes:
        """The events that open a stream."""

    def delta(self, delta: dict[str, Any]) -> bytes:
        out = b""
        for kind, value in _parts(delta):
            if kind != self._open:
                if self._open is not None:
                    out += self._close(self._open)
                out += self._begin(kind, value)
                self._open = kind
            out += self._piece(kind, value)
        return out

    def finish(self, plan: Plan) -> bytes:
        out = self._close(self._open) if self._open is not None else b""
        self._open = None
        return out + self._end(plan)

    @abstractmethod
    def error(self, message: str) -> bytes:
        """An in-band error event."""

    @abstractmethod
    def _begin(self, kind: str, value: Any) -> bytes:
        """Open an output item or content block of this kind."""

    @abstractmethod
    def _piece(self, kind: str, value: Any) -> bytes:
        """One delta of the open item."""

    @abstractmethod
    def _close(self, kind: str) -> bytes:
        """Close the open item."""

    @abstractmethod
    def _end(self, plan: Plan) -> bytes:
        """The events that end a stream."""


def _parts(delta: dict[str, Any]) -> list[tuple[str, Any]]:
    parts: list[tuple[str, Any]] = []
    if delta.get("reasoning"):
        parts.append(("reasoning", delta["reasoning"]))
    if delta.get("content"):
        parts.append(("content", delta["content"]))
    for call in delta.get("tool_calls") or ():
        parts.append(("tool", call))
    return parts


class ResponsesWriter(Writer):
    def __init__(self, model: str) -> None:
        super().__init__(model)
        self.id = "resp_" + uuid.uuid4().hex
        self._seq = 0
        self._index = -1
        self._item: dict[str, Any] = {}
        self._text = ""

    def body(self, plan: Plan, status: str = "completed") -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        if plan.reasoning:
            text = "".join(plan.reasoning)
            output.append(
                {
                    "id": "rs_" + self.id[5:],
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": text}],
                }
            )
        if plan.content or plan.tool_call is None:
            output.append(
                {
                    "id": "msg_" + self.id[5:],
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "".join(plan.content), "annotations": []}],
                }
            )
        if plan.tool_call is not None:
            call = plan.tool_call
            output.append(
                {
                    "id": "fc_" + self.id[5:],
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": call["name"],
                    "arguments": call["arguments"],
                    "status": "completed",
                }
            )
        usage = {
            "input_tokens": plan.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": plan.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": len(plan.reasoning)},
            "total_tokens": plan.prompt_tokens + plan.completion_tokens,
        }
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "model": self.model,
            "status": status if plan.finish_reason != "length" else "incomplete",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage if status == "completed" else None,
        }

    def _emit(self, name: str, body: dict[str, Any]) -> bytes:
        self._seq += 1
        return _event(name, {**body, "sequence_number": self._seq - 1})

    def start(self, plan: Plan) -> bytes:
        head = self.body(plan, status="in_progress")
        head["output"] = []
        return self._emit("response.created", {"response": head}) + self._emit(
            "response.in_progress", {"response": head}
        )

    def _begin(self, kind: str, value: Any) -> bytes:
        self._index += 1
        self._text = ""
        suffix = self.id[5:] + str(self._index)
        if kind == "reasoning":
            self._item = {"id": "rs_" + suffix, "type": "reasoning", "summary": [], "content": []}
        elif kind == "content":
            self._item = {
                "id": "msg_" + suffix,
                "type": "message",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
        else:
            function = value.get("function") or {}
            self._item = {
                "id": "fc_" + suffix,
                "type": "function_call",
                "call_id": value.get("id"),
                "name": function.get("name"),
                "arguments": "",
                "status": "in_progress",
            }
        out = self._emit("response.output_item.added", {"output_index": self._index, "item": self._item})
        if kind == "content":
            part = {"type": "output_text", "text": "", "annotations": []}
            out += self._emit("response.content_part.added", self._where(part=part))
        return out

    def _where(self, **extra: Any) -> dict[str, Any]:
        return {"item_id": self._item["id"], "output_index": self._index, "content_index": 0, **extra}

    def _piece(self, kind: str, value: Any) -> bytes:
        if kind == "tool":
            piece = str((value.get("function") or {}).get("arguments") or "")
            self._text += piece
            if not piece:
                return b""
            body = {"item_id": self._item["id"], "output_index": self._index, "delta": piece}
            return self._emit("response.function_call_arguments.delta", body)
        self._text += value
        name = "response.reasoning_text.delta" if kind == "reasoning" else "response.output_text.delta"
        return self._emit(name, self._where(delta=value))

    def _close(self, kind: str) -> bytes:
        item = dict(self._item, status="completed") if "status" in self._item else dict(self._item)
        if kind == "tool":
            item["arguments"] = self._text
            body = {"item_id": item["id"], "output_index": self._index, "arguments": self._text}
            out = self._emit("response.function_call_arguments.done", body)
        elif kind == "reasoning":
            item["content"] = [{"type": "reasoning_text", "text": self._text}]
            out = self._emit("response.reasoning_text.done", self._where(text=self._text))
        else:
            part = {"type": "output_text", "text": self._text, "annotations": []}
            item["content"] = [part]
            out = self._emit("response.output_text.done", self._where(text=self._text))
            out += self._emit("response.content_part.done", self._where(part=part))
        return out + self._emit("response.output_item.done", {"output_index": self._index, "item": item})

    def _end(self, plan: Plan) -> bytes:
        body = self.body(plan)
        name = "response.completed" if body["status"] == "completed" else "response.incomplete"
        return self._emit(name, {"response": body})

    def error(self, message: str) -> bytes:
        return self._emit("error", {"code": "server_error", "message": message, "param": None})


class MessagesWriter(Writer):
    def __init__(self, model: str) -> None:
        super().__init__(model)
        self.id = "msg_" + uuid.uuid4().hex
        self._index = -1

    def body(self, plan: Plan) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if plan.reasoning:
            content.append({"type": "thinking", "thinking": "".join(plan.reasoning), "signature": ""})
        if plan.content or plan.tool_call is None:
            content.append({"type": "text", "text": "".join(plan.content)})
        if plan.tool_call is not None:
            call = plan.tool_call
            content.append(
                {
                    "type": "tool_use",
                    "id": "toolu_" + call["id"][5:],
                    "name": call["name"],
                    "input": _loads(call["arguments"]),
                }
            )
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": _STOP.get(plan.finish_reason, "end_turn"),
            "stop_sequence": None,
            "usage": {"input_tokens": plan.prompt_tokens, "output_tokens": plan.completion_tokens},
        }

    def start(self, plan: Plan) -> bytes:
        message = {**self.body(plan), "content": [], "stop_reason": None}
        message["usage"] = {"input_tokens": plan.prompt_tokens, "output_tokens": 1}
        return _event("message_start", {"message": message})

    def _begin(self, kind: str, value: Any) -> bytes:
        self._index += 1
        block: dict[str, Any]
        if kind == "reasoning":
            block = {"type": "thinking", "thinking": "", "signature": ""}
        elif kind == "content":
            block = {"type": "text", "text": ""}
        else:
            function = value.get("function") or {}
            block = {
                "type": "tool_use",
                "id": "toolu_" + str(value.get("id"))[5:],
                "name": function.get("name"),
                "input": {},
            }
        return _event("content_block_start", {"index": self._index, "content_block": block})

    def _piece(self, kind: str, value: Any) -> bytes:
        if kind == "tool":
            piece = str((value.get("function") or {}).get("arguments") or "")
            delta = {"type": "input_json_delta", "partial_json": piece}
            return _event("content_block_delta", {"index": self._index, "delta": delta}) if piece else b""
        if kind == "reasoning":
            delta = {"type": "thinking_delta", "thinking": value}
        else:
            delta = {"type": "text_delta", "text": value}
        return _event("content_block_delta", {"index": self._index, "delta": delta})

    def _close(self, kind: str) -> bytes:
        return _event("content_block_stop", {"index": self._index})

    def _end(self, plan: Plan) -> bytes:
        delta = {"stop_reason": _STOP.get(plan.finish_reason, "end_turn"), "stop_sequence": None}
        usage = {"output_tokens": plan.completion_tokens}
        return _event("message_delta", {"delta": delta, "usage": usage}) + _event("message_stop", {})

    def error(self, message: str) -> bytes:
        return _event("error", {"error": {"type": "api_error", "message": message}})


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
