"""JSON log lines, one object a line, and the request log.

The request log never holds prompt or completion text, headers, or a credential: it is built from the
:class:`RequestRecord` fields only.
"""

from __future__ import annotations

import functools
import logging
import sys
import time
import traceback
from collections.abc import Callable
from typing import TextIO

import orjson

from gateway.record import RequestRecord
from gateway.telemetry.metrics import AUTH_REASONS, OTHER

__all__ = ["AuthFailureLog", "JSONFormatter", "configure_logging", "log_request"]

request_log = logging.getLogger("gateway.request")
auth_log = logging.getLogger("gateway.auth")


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": _timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info and record.exc_info[0] is not None:
            # The type and where it was raised, not the message: messages can hold request content or keys.
            entry["exc_type"] = record.exc_info[0].__name__
            frames = traceback.extract_tb(record.exc_info[2])
            entry["exc_where"] = [f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno} {f.name}" for f in frames[-5:]]
        return orjson.dumps(entry, default=str).decode()


@functools.lru_cache(maxsize=1)
def _second(whole: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))


def _timestamp(created: float) -> str:
    """ISO 8601 UTC with milliseconds; the seconds part is formatted once per second (strftime is slow)."""
    whole = int(created)
    return f"{_second(whole)}.{int((created - whole) * 1000):03d}Z"


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # uvicorn's access log writes the raw request line, query string included: ours replaces it.
    logging.getLogger("uvicorn.access").disabled = True
    # One line per upstream call from httpx duplicates the request log and costs time on the hot path.
    logging.getLogger("httpx").setLevel(max(root.level, logging.WARNING))
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


def log_request(record: RequestRecord, finished: float) -> None:
    if not request_log.isEnabledFor(logging.INFO):
        return
    fields: dict[str, object] = {
        "request_id": record.request_id,
        "method": record.method,
        "path": record.path,
        "principal": record.principal,
        "backend": record.backend,
        "route": list(record.route_reasons),
        "stream": record.stream,
        "status": record.status,
        "outcome": record.outcome,
        "duration_ms": round((finished - record.started) * 1000, 2),
    }
    if record.client_request_id is not None:
        fields["client_request_id"] = record.client_request_id
    if record.route_score is not None:
        # Beside "fallback" below: a quality fallback from a request scored just under the threshold
        # says the threshold is too high (routing.scorer.threshold).
        fields["route_score"] = round(record.route_score, 3)
    if record.error_code:
        fields["error_code"] = record.error_code
    if record.ttfb is not None:
        fields["ttfb_ms"] = round(record.ttfb * 1000, 2)
    if record.pacing is not None:
        fields["pacing_ms"] = round(record.pacing * 1000)
    if record.fallbacks:
        fields["fallback"] = [f"{a}>{b}:{why}" for a, b, why in record.fallbacks]
    if record.upstream_errors:
        fields["upstream_errors"] = [f"{backend}:{kind}" for backend, kind in record.upstream_errors]
    usage = record.usage
    if usage is not None:
        fields["prompt_tokens"] = usage.prompt_tokens
        fields["completion_tokens"] = usage.completion_tokens
        fields["reasoning_tokens"] = usage.reasoning_tokens
        if record.usage_estimated:
            fields["usage_estimated"] = True
    run = record.diffusion
    if run is not None and record.backend is not None:
        fields["sampler"] = run.sampler
        fields["entropy_bound"] = run.entropy_bound
        fields["canvas_length"] = run.canvas_length
        fields["max_steps"] = run.max_steps
        if usage is not None:
            fields["canvases"] = run.canvases(usage.completion_tokens)
            fields["canvas_fill"] = round(run.fill(usage.completion_tokens), 4)
    if record.content is not None:
        # Only with telemetry.log_content: true.
        fields["content"] = {k: v[: record.content_limit] for k, v in record.content.items()}
    handler = _direct_handler()
    if handler is None:
        request_log.info("request", extra={"fields": fields})
        return
    # The line JSONFormatter would write, without a LogRecord, a stack walk for the caller and a Formatter:
    # together they were about half of the request log's cost, and the request log about a tenth of the
    # gateway's own CPU per request (bench/hotpath.py, py-spy).
    entry: dict[str, object] = {
        "ts": _timestamp(time.time()),
        "level": "info",
        "logger": request_log.name,
        "msg": "request",
    }
    entry.update(fields)
    line = orjson.dumps(entry).decode() + handler.terminator
    with handler.lock:  # type: ignore[union-attr]  # created by Handler.__init__
        handler.stream.write(line)
        handler.stream.flush()


def _direct_handler() -> logging.StreamHandler[TextIO] | None:
    """The JSON stream handler when logging is configured as configure_logging left it (the request log
    then goes straight to its stream); None under any other configuration (a test's capture, a handler,
    a filter added by an embedding application), which gets a regular LogRecord."""
    root = logging.root
    if request_log.handlers or request_log.filters or request_log.disabled or not request_log.propagate:
        return None
    if root.filters or len(root.handlers) != 1:
        return None
    handler = root.handlers[0]
    if (
        type(handler) is not logging.StreamHandler
        or not isinstance(handler.formatter, JSONFormatter)
        or handler.filters
        or handler.level > logging.INFO
    ):
        return None
    return handler


class AuthFailureLog:
    """The log line of a refused credential (401), sampled: at most ``per_second`` lines in each second for
    each reason, the next line written saying how many were left out before it (``suppressed``). A request
    finisher: it takes the place of the request's own log line, which the middleware leaves out for these.

    The line holds the reason (a fixed code: expired, audience, signature, invalid...), the request id,
    method and path; never the credential nor any part of it, and the client is told none of it (its 401
    says only that the credential was refused)."""

    def __init__(self, per_second: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._per_second = per_second
        self._clock = clock
        # reason -> [the second it counts, lines written in it, failures left out since the last line]
        self._reasons: dict[str, list[int]] = {}

    def finish(self, record: RequestRecord, finished: float) -> None:
        reason = record.auth_failure
        if reason is None:
            return
        reason = reason if reason in AUTH_REASONS else OTHER  # a bounded set, as the metric's label
        second = int(self._clock())
        state = self._reasons.get(reason)
        if state is None:
            state = self._reasons[reason] = [second, 0, 0]
        elif state[0] != second:
            state[0], state[1] = second, 0
        if state[1] >= self._per_second:
            state[2] += 1
            return
        state[1] += 1
        suppressed, state[2] = state[2], 0
        fields: dict[str, object] = {
            "reason": reason,
            "request_id": record.request_id,
            "method": record.method,
            "path": record.path,
            "status": record.status,
            "suppressed": suppressed,
        }
        auth_log.info("authentication failed", extra={"fields": fields})
