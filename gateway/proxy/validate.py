"""Sampling parameters checked against the documented ranges before anything routes on them.

Checked here, in the request's parsing, every route answers the same 400: otherwise ``temperature: 5``
with ``model: auto`` would get a 200 (the diffusion route's ``adapt`` policy drops the value before
anything looks at it), while the same request pinned to the autoregressive backend gets vLLM's 400.

Ranges are OpenAI's API reference (chat, completions, responses) and Anthropic's for ``/v1/messages``
(temperature 0 to 1 there). ``null`` means "not set", as in both APIs. Fields not listed pass through to
the backend, which judges them itself.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import InvalidRequest
from gateway.proxy.dialects import OUTPUT_LIMITS, Endpoint

__all__ = ["validate_parameters"]

# name: (low, high); high None means no upper bound.
_NUMBERS: dict[str, tuple[float, float | None]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "presence_penalty": (-2.0, 2.0),
    "frequency_penalty": (-2.0, 2.0),
}
_MESSAGES_NUMBERS: dict[str, tuple[float, float | None]] = {"temperature": (0.0, 1.0), "top_p": (0.0, 1.0)}
# Integers: the output limits (at least 1 token), plus these.
_INTEGERS: dict[str, tuple[int, int | None]] = {"n": (1, None), "top_logprobs": (0, 20)}


def validate_parameters(payload: dict[str, Any], endpoint: Endpoint) -> None:
    """Raise InvalidRequest (400) for the first parameter out of its documented range or of a wrong type."""
    numbers = _MESSAGES_NUMBERS if endpoint == "messages" else _NUMBERS
    for name, (low, high) in numbers.items():
        value = payload.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidRequest(f"Invalid '{name}': expected a number.", param=name, code="invalid_type")
        _check_range(name, value, low, high, "decimal")
    integers = dict(_INTEGERS)
    for name in OUTPUT_LIMITS[endpoint]:
        integers[name] = (1, None)
    for name, (ilow, ihigh) in integers.items():
        value = payload.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidRequest(f"Invalid '{name}': expected an integer.", param=name, code="invalid_type")
        _check_range(name, value, ilow, ihigh, "integer")


def _check_range(name: str, value: float, low: float, high: float | None, kind: str) -> None:
    if value < low:
        raise InvalidRequest(
            f"Invalid '{name}': {kind} below minimum value. Expected a value >= {low:g}, but got {value:g}.",
            param=name,
            code=f"{kind}_below_min_value",
        )
    if high is not None and value > high:
        raise InvalidRequest(
            f"Invalid '{name}': {kind} above maximum value. Expected a value <= {high:g}, but got {value:g}.",
            param=name,
            code=f"{kind}_above_max_value",
        )
