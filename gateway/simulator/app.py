"""The simulated vLLM server: routes, wire format, queueing, fault injection, metrics.

Wire format as vLLM 0.33 writes it (docs/backends.md): OpenAI bodies, ``data: {json}\\n\\n`` SSE ending in
``data: [DONE]``, the usage chunk with ``"choices": []`` only when ``stream_options.include_usage`` is set,
the ``reasoning`` field, ``{"error": {...}}`` bodies with vLLM's ``type``/``code``, and its flat
``{"error": "Unauthorized"}`` 401. A client that disconnects cancels the work, as vLLM does, and the
simulator counts it so tests can observe that the gateway really closed the upstream request.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.proxy.dialects import Endpoint, chat_view
from gateway.proxy.streaming import ClientDisconnected, RelayStreamResponse, cancel_on_disconnect
from gateway.simulator.plan import Plan, make_plan
from gateway.simulator.settings import Fault, SimulatorSettings, Timing
from gateway.simulator.wire import MessagesWriter, ResponsesWriter, Writer
from gateway.wire import DIFFUSION_UNSUPPORTED_SAMPLING

__all__ = ["SimulatorState", "create_simulator"]

FAULT_HEADER = "x-sim-fault"


@dataclass
class SimulatorState:
    """Counters that tests read directly (in-process) or through ``GET /sim/stats``."""

    started: int = 0
    completed: int = 0
    cancelled: int = 0
    running: int = 0
    waiting: int = 0
    last_headers: dict[str, str] = field(default_factory=dict)
    last_body: dict[str, Any] = field(default_factory=dict)

    def snapshot(self) -> dict[str, Any]:
        return {
            "started": self.started,
            "completed": self.completed,
            "cancelled": self.cancelled,
            "running": self.running,
            "waiting": self.waiting,
        }


class _Metrics:
    def __init__(self, registry: CollectorRegistry, model: str, diffusion: bool) -> None:
        labels = {"model_name": model, "engine": "0"}
        names = list(labels)

        def gauge(name: str, doc: str) -> Any:
            return Gauge(name, doc, names, registry=registry).labels(**labels)

        self.running = gauge("vllm:num_requests_running", "Requests in model execution batches.")
        self.waiting = gauge("vllm:num_requests_waiting", "Requests waiting to be processed.")
        self.kv_cache = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
        self.ttft = Histogram(
            "vllm:time_to_first_token_seconds", "Time to first token.", names, registry=registry
        ).labels(**labels)
        self.e2e = Histogram(
            "vllm:e2e_request_latency_seconds", "End to end request latency.", names, registry=registry
        ).labels(**labels)
        self.diffusion = diffusion
        if diffusion:

            def counter(name: str, doc: str) -> Any:
                return Counter(name, doc, names, registry=registry).labels(**labels)

            self.steps = counter("vllm:diffusion_num_denoising_steps", "Denoising steps run.")
            self.positions = counter("vllm:diffusion_num_canvas_positions", "Canvas positions denoised.")
            self.committed = counter("vllm:diffusion_num_committed_tokens", "Tokens committed from canvases.")


def _vllm_error(message: str, status: int, type_: str, param: str | None = None) -> Response:
    body = {"error": {"message": message, "type": type_, "param": param, "code": status}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


def _reject_for_diffusion(payload: dict[str, Any]) -> Response | None:
    """The 400s and crashes the diffusion backend produces (docs/backends.md)."""
    temperature = payload.get("temperature")
    bad = [k for k in DIFFUSION_UNSUPPORTED_SAMPLING if payload.get(k) is not None]
    if temperature is not None and temperature != 1.0:
        bad.insert(0, "temperature")
    if bad:
        return _vllm_error(
            f"{', '.join(bad)}: these sampling parameters are not yet supported with diffusion models.",
            400,
            "BadRequestError",
        )
    response_format = payload.get("response_format")
    if payload.get("structured_outputs") is not None or (
        isinstance(response_format, dict) and response_format.get("type") in ("json_schema", "json_object")
    ):
        return _vllm_error(
            "Structured outputs are not supported with diffusion models.", 400, "BadRequestError"
        )
    if payload.get("logprobs") or _has_image(payload):
        # vLLM #56712 (images) and #45689 (logprobs): the engine died instead of answering.
        return _vllm_error(
            "EngineCore encountered an issue. See stack trace for the root cause.", 500, "InternalServerError"
        )
    return None


def _has_image(payload: dict[str, Any]) -> bool:
    for message in payload.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(p, dict) and p.get("type") in ("image_url", "input_image") for p in content
        ):
            return True
    return False


class _Simulator:
    def __init__(
        self, settings: SimulatorSettings, state: SimulatorState, registry: CollectorRegistry
    ) -> None:
        self.settings = settings
        self.model = settings.resolved_model()
        self.timing: Timing = settings.resolved_timing()
        self.state = state
        self.registry = registry
        self.metrics = _Metrics(registry, self.model, settings.kind == "diffusion")
        self.slots = asyncio.Semaphore(settings.max_concurrency)
        self.created = int(time.time())

    # ---- routes -------------------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        return Response(status_code=200)

    async def version(self, request: Request) -> Response:
        return Response(orjson.dumps({"version": "0.33.0"}), media_type="application/json")

    async def stats(self, request: Request) -> Response:
        return Response(orjson.dumps(self.state.snapshot()), media_type="application/json")

    async def prometheus(self, request: Request) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

    async def internal(self, request: Request) -> Response:
        # /tokenize, /pause...: open on a real vLLM server too (docs/backends.md); must never be proxied.
        return Response(orjson.dumps({"internal": request.url.path}), media_type="application/json")

    async def models(self, request: Request) -> Response:
        if (denied := self._check_key(request)) is not None:
            return denied
        card = {
            "id": self.model,
            "object": "model",
            "created": self.created,
            "owned_by": "vllm",
            "root": self.model,
            "parent": None,
            "max_model_len": self.settings.max_model_len,
        }
        return Response(orjson.dumps({"object": "list", "data": [card]}), media_type="application/json")

    async def chat(self, request: Request) -> Response:
        return await self._generate(request, "chat")

    async def completions(self, request: Request) -> Response:
        return await self._generate(request, "completions")

    async def responses(self, request: Request) -> Response:
        return await self._generate(request, "responses")

    async def messages(self, request: Request) -> Response:
        return await self._generate(request, "messages")

    # ---- generation ---------------------------------------------------------------------------------

    def _check_key(self, request: Request) -> Response | None:
        if self.settings.api_key is None:
            return None
        if request.headers.get("authorization") != f"Bearer {self.settings.api_key}":
            return Response(
                orjson.dumps({"error": "Unauthorized"}), status_code=401, media_type="application/json"
            )
        return None

    async def _generate(self, request: Request, dialect: Endpoint) -> Response:
        if (denied := self._check_key(request)) is not None:
            return denied
        try:
            payload = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return _vllm_error("Invalid JSON body.", 400, "BadRequestError")
        if not isinstance(payload, dict):
            return _vllm_error("Request body must be an object.", 400, "BadRequestError")
        self.state.last_headers = dict(request.headers)
        self.state.last_body = payload
        # x-sim-fault-<kind> targets one kind of backend, x-sim-fault every backend the request reaches.
        header = request.headers.get(f"{FAULT_HEADER}-{self.settings.kind}") or request.headers.get(
            FAULT_HEADER
        )
        try:
            fault = Fault.parse(header) if header else None
        except ValidationError as exc:
            return _vllm_error(f"bad {FAULT_HEADER}: {exc.errors()[0]['msg']}", 400, "BadRequestError")
        fault = fault or self.settings.fault or Fault()

        if payload.get("model") != self.model:
            return _vllm_error(
                f"The model `{payload.get('model')}` does not exist.", 404, "NotFoundError", "model"
            )
        # Responses and Messages requests are answered as the equivalent chat request would be.
        view = chat_view(payload, dialect)
        if self.settings.kind == "diffusion" and (rejected := _reject_for_diffusion(view)) is not None:
            return rejected
        seed = orjson.dumps(view.get("messages", view.get("prompt"))).decode()
        plan = make_plan(view, self.settings, seed, fault.rough)
        if plan.prompt_tokens > self.settings.max_model_len:
            return _vllm_error(
                f"This model's maximum context length is {self.settings.max_model_len} tokens. However, your "
                f"prompt contains {plan.prompt_tokens} input tokens. Please reduce the length of the input.",
                400,
                "BadRequestError",
            )
        options = payload.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        chat = dialect != "completions"
        ids = _Ids(chat=chat, model=self.model, dialect=dialect)
        self.state.started += 1
        if payload.get("stream") is True:
            return await self._stream(request, plan, fault, ids, include_usage, chat)
        try:
            return await cancel_on_disconnect(request.receive, self._unary(plan, fault, ids, chat))
        except ClientDisconnected:
            self.state.cancelled += 1
            return Response(status_code=499)

    async def _unary(self, plan: Plan, fault: Fault, ids: _Ids, chat: bool) -> Response:
        started = time.perf_counter()
        if fault.delay:
            await asyncio.sleep(fault.delay)
        if fault.status is not None:
            self.state.completed += 1
            return _vllm_error("Simulated failure.", fault.status, "InternalServerError")
        async with self._slot():
            # A non-streaming answer leaves only when it is complete: one wait for the whole timeline.
            await _sleep(sum(self._timeline(plan)))
            self._count_diffusion(plan)
        if fault.stall_after is not None:
            await asyncio.Event().wait()
        if fault.drop_after is not None:
            self.state.completed += 1
            return _BrokenResponse()
        self.metrics.e2e.observe(time.perf_counter() - started)
        self.state.completed += 1
        body = ids.writer.body(plan) if ids.writer is not None else ids.full(plan, chat)
        return Response(orjson.dumps(body), media_type="application/json")

    async def _stream(
        self, request: Request, plan: Plan, fault: Fault, ids: _Ids, include_usage: bool, chat: bool
    ) -> Response:
        if fault.status is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)
            self.state.completed += 1
            return _vllm_error("Simulated failure.", fault.status, "InternalServerError")
        finished = False

        async def body() -> AsyncIterator[bytes]:
            nonlocal finished
            started = time.perf_counter()
            if fault.delay:
                await asyncio.sleep(fault.delay)
            sent = 0
            async with self._slot():
                for delay, chunk in zip(
                    self._timeline(plan), ids.chunks(plan, chat, self.settings.kind), strict=True
                ):
                    await _sleep(delay)
                    if fault.drop_after is not None and sent >= fault.drop_after:
                        raise _Dropped("simulated dropped connection")
                    if fault.stall_after is not None and sent >= fault.stall_after:
                        await asyncio.Event().wait()
                    if fault.error_after is not None and sent >= fault.error_after:
                        if ids.writer is not None:
                            yield ids.writer.error("Simulated engine failure.")
                            finished = True
                            return
                        yield (
                            _sse(
                                {
                                    "error": {
                                        "message": "Simulated engine failure.",
                                        "type": "InternalServerError",
                                        "param": None,
                                        "code": 500,
                                    }
                                }
                            )
                            + b"data: [DONE]\n\n"
                        )
                        finished = True
                        return
                    if sent == 0:
                        self.metrics.ttft.observe(time.perf_counter() - started)
                    yield chunk
                    sent += 1
                self._count_diffusion(plan)
            if ids.writer is not None:
                yield ids.writer.finish(plan)
            else:
                yield _sse(ids.final_chunk(plan, chat))
                if include_usage:
                    yield _sse(ids.usage_chunk(plan, chat))
                yield b"data: [DONE]\n\n"
            self.metrics.e2e.observe(time.perf_counter() - started)
            finished = True

        def on_end(disconnected: bool) -> None:
            if finished:
                self.state.completed += 1
            else:
                self.state.cancelled += 1

        return RelayStreamResponse(
            body(), status=200, headers=[("content-type", "text/event-stream; charset=utf-8")], on_end=on_end
        )

    def _timeline(self, plan: Plan) -> list[float]:
        """The wait before each chunk: per canvas for diffusion, per token for autoregressive."""
        t = self.timing
        if self.settings.kind == "diffusion":
            waits = [t.canvas_s * c.steps / self.settings.max_denoising_steps for c in plan.canvases]
            waits[0] += t.prefill_s
            return waits
        n = len(_ar_pieces(plan))
        return [t.ttft_s] + [t.token_s] * (n - 1)

    def _count_diffusion(self, plan: Plan) -> None:
        if not self.metrics.diffusion:
            return
        for canvas in plan.canvases:
            self.metrics.steps.inc(canvas.steps)
            self.metrics.positions.inc(plan.canvas_length)
            self.metrics.committed.inc(len(canvas.reasoning) + len(canvas.content))
        self.metrics.committed.inc(plan.tool_tokens)

    def _slot(self) -> _Slot:
        return _Slot(self)


class _Dropped(Exception):
    """Raised inside a response to make the server cut the connection (a simulated crash)."""


class _BrokenResponse(Response):
    """Headers and half a body, then the connection is cut: a backend that died mid-answer."""

    def __init__(self) -> None:
        super().__init__(status_code=200)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"4096")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"id": "chatcmpl-', "more_body": True})
        raise _Dropped("simulated dropped connection")


class _Slot:
    """One of ``max_concurrency`` sequences, as ``--max-num-seqs``: beyond it, requests wait."""

    def __init__(self, sim: _Simulator) -> None:
        self.sim = sim

    async def __aenter__(self) -> None:
        s, m = self.sim.state, self.sim.metrics
        s.waiting += 1
        m.waiting.set(s.waiting)
        try:
            await self.sim.slots.acquire()
        finally:
            s.waiting -= 1
            m.waiting.set(s.waiting)
        s.running += 1
        m.running.set(s.running)
        m.kv_cache.set(min(1.0, s.running / self.sim.settings.max_concurrency * 0.8))

    async def __aexit__(self, *exc: object) -> None:
        s, m = self.sim.state, self.sim.metrics
        s.running -= 1
        m.running.set(s.running)
        m.kv_cache.set(min(1.0, s.running / self.sim.settings.max_concurrency * 0.8))
        self.sim.slots.release()


async def _sleep(seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds)


def _sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def _ar_pieces(plan: Plan) -> list[dict[str, Any]]:
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


class _Ids:
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
            deltas = _ar_pieces(plan)
        if self.writer is not None:
            chunks = [self.writer.delta(delta) for delta in deltas]
            chunks[0] = self.writer.start(plan) + chunks[0]
            return chunks
        return [_sse(self._chunk(delta, chat)) for delta in deltas]

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


def create_simulator(
    settings: SimulatorSettings, *, registry: CollectorRegistry | None = None
) -> tuple[Starlette, SimulatorState]:
    """The simulator app and the state object tests can read."""
    state = SimulatorState()
    sim = _Simulator(settings, state, registry or CollectorRegistry())
    served = {
        "chat": Route("/v1/chat/completions", sim.chat, methods=["POST"]),
        "completions": Route("/v1/completions", sim.completions, methods=["POST"]),
        "responses": Route("/v1/responses", sim.responses, methods=["POST"]),
        "messages": Route("/v1/messages", sim.messages, methods=["POST"]),
    }
    routes = [route for name, route in served.items() if name in settings.endpoints] + [
        Route("/v1/models", sim.models, methods=["GET"]),
        Route("/health", sim.health, methods=["GET"]),
        Route("/version", sim.version, methods=["GET"]),
        Route("/metrics", sim.prometheus, methods=["GET"]),
        Route("/sim/stats", sim.stats, methods=["GET"]),
        Route("/tokenize", sim.internal, methods=["POST"]),
        Route("/detokenize", sim.internal, methods=["POST"]),
        Route("/pause", sim.internal, methods=["POST"]),
        Route("/collective_rpc", sim.internal, methods=["POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={404: _not_found}), state


async def _not_found(request: Request, exc: Exception) -> Response:
    # vLLM is a FastAPI app: an unknown route is FastAPI's bare {"detail": "Not Found"}.
    return Response(orjson.dumps({"detail": "Not Found"}), status_code=404, media_type="application/json")
