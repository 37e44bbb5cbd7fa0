"""What vLLM refuses, and how: its ``{"error": {...}}`` bodies, and the requests a diffusion backend
answers with a 400 or (engine bugs) a 500 (docs/backends.md)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from gateway.chat_view import asks_logprobs, content_kind
from gateway.wire import DIFFUSION_UNSUPPORTED_SAMPLING, Endpoint

__all__ = ["has_image", "reject_for_diffusion", "vllm_error"]


def vllm_error(message: str, status: int, type_: str, param: str | None = None) -> Response:
    body = {"error": {"message": message, "type": type_, "param": param, "code": status}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


def reject_for_diffusion(payload: dict[str, Any], dialect: Endpoint = "chat") -> Response | None:
    """The 400s and crashes the diffusion backend produces (docs/backends.md), for a request's chat view."""
    temperature = payload.get("temperature")
    bad = [k for k in DIFFUSION_UNSUPPORTED_SAMPLING if payload.get(k) is not None]
    if temperature is not None and temperature != 1.0:
        bad.insert(0, "temperature")
    if bad:
        return vllm_error(
            f"{', '.join(bad)}: these sampling parameters are not yet supported with diffusion models.",
            400,
            "BadRequestError",
        )
    response_format = payload.get("response_format")
    if payload.get("structured_outputs") is not None or (
        isinstance(response_format, dict) and response_format.get("type") in ("json_schema", "json_object")
    ):
        return vllm_error(
            "Structured outputs are not supported with diffusion models.", 400, "BadRequestError"
        )
    if asks_logprobs(payload, dialect) or has_image(payload):
        # The engine dies instead of answering (https://github.com/vllm-project/vllm/issues/56712 images,
        # https://github.com/vllm-project/vllm/issues/45689 logprobs).
        return vllm_error(
            "EngineCore encountered an issue. See stack trace for the root cause.", 500, "InternalServerError"
        )
    return None


def has_image(payload: dict[str, Any]) -> bool:
    """Content the engine cannot take, at any depth: an image, or any other part that is not text."""
    return any(
        content_kind(message.get("content")) is not None
        for message in payload.get("messages") or ()
        if isinstance(message, dict)
    )
