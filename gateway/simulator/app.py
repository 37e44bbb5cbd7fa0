"""The simulated vLLM server: routes, generation and its timing, fault injection.

Beside it: chat.py and wire.py write the answers (chat and completions; Responses and Messages),
refusals.py what vLLM refuses, state.py the counters, vLLM's metrics and the sequence slots, plan.py what
an answer will be. Like a real backend, the simulator shares no code with the gateway's layers: it reads
the shared leaves only (``gateway.wire``, ``gateway.relay``, ``gateway.chat_view``), as pyproject.toml's
import contract checks.

Wire format as vLLM 0.33 writes it (docs/backends.md): OpenAI bodies, ``data: {json}\\n\\n`` SSE ending in
``data: [DONE]``, the usage chunk with ``"choices": []`` only when ``stream_options.include_usage`` is set,
the ``reasoning`` field, ``{"error": {...}}`` bodies with vLLM's ``type``/``code``, and its flat
``{"error": "Unauthorized"}`` 401. A client that disconnects cancels the work, as vLLM does, and the
simulator counts it so tests can observe that the gateway really closed the upstream request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.chat_view import chat_view
from gateway.relay import ClientDisconnected, RelayStreamResponse, cancel_on_disconnect
from gateway.simulator.chat import Ids, ar_pieces, sse
from gateway.simulator.plan import Plan, make_plan
from gateway.simulator.refusals import reject_for_diffusion, vllm_error
from gateway.simulator.settings import Fault, SimulatorSettings, Timing
from gateway.simulator.state import SimulatorState, Slots, VllmMetrics
from gateway.wire import Endpoint

__all__ = ["create_simulator"]

FAULT_HEADER = "x-sim-fault"


class _Simulator:
    def __init__(
        self, settings: SimulatorSettings, state: SimulatorState, registry: CollectorRegistry
    ) -> None:
        self.settings = settings
        self.model = settings.resolved_model()
        self.timing: Timing = settings.resolved_timing()
        self.state = state
        self.registry = registry
        self.metrics = VllmMetrics(registry, self.model, settings.kind == "diffusion")
        self.slots = Slots(settings.max_concurrency, state, self.metrics)
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
            return vllm_error("Invalid JSON body.", 400, "BadRequestError")
        if not isinstance(payload, dict):
            return vllm_error("Request body must be an object.", 400, "BadRequestError")
        self.state.last_headers = dict(request.headers)
        self.state.last_body = payload
        # x-sim-fault-<kind> targets one kind of backend, x-sim-fault every backend the request reaches.
        header = request.headers.get(f"{FAULT_HEADER}-{self.settings.kind}") or request.headers.get(
            FAULT_HEADER
        )
        try:
            fault = Fault.parse(header) if header else None
        except ValidationError as exc:
            return vllm_error(f"bad {FAULT_HEADER}: {exc.errors()[0]['msg']}", 400, "BadRequestError")
        fault = fault or self.settings.fault or Fault()

        if payload.get("model") != self.model:
            return vllm_error(
                f"The model `{payload.get('model')}` does not exist.", 404, "NotFoundError", "model"
            )
        # Responses and Messages requests are answered as the equivalent chat request would be.
        view = chat_view(payload, dialect)
        if (
            self.settings.kind == "diffusion"
            and (rejected := reject_for_diffusion(view, dialect)) is not None
        ):
            return rejected
        seed = orjson.dumps(view.get("messages", view.get("prompt"))).decode()
        plan = make_plan(view, self.settings, seed, fault.rough)
        if plan.prompt_tokens > self.settings.max_model_len:
            return vllm_error(
                f"This model's maximum context length is {self.settings.max_model_len} tokens. However, your "
                f"prompt contains {plan.prompt_tokens} input tokens. Please reduce the length of the input.",
                400,
                "BadRequestError",
            )
        options = payload.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        chat = dialect != "completions"
        ids = Ids(chat=chat, model=self.model, dialect=dialect)
        self.state.started += 1
        if payload.get("stream") is True:
            return await self._stream(plan, fault, ids, include_usage, chat)
        try:
            return await cancel_on_disconnect(request.receive, self._unary(plan, fault, ids, chat))
        except ClientDisconnected:
            self.state.cancelled += 1
            return Response(status_code=499)

    async def _unary(self, plan: Plan, fault: Fault, ids: Ids, chat: bool) -> Response:
        started = time.perf_counter()
        if fault.delay:
            await asyncio.sleep(fault.delay)
        if fault.status is not None:
            self.state.completed += 1
            return vllm_error("Simulated failure.", fault.status, "InternalServerError")
        async with self.slots:
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

    async def _stream(self, plan: Plan, fault: Fault, ids: Ids, include_usage: bool, chat: bool) -> Response:
        if fault.status is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)
            self.state.completed += 1
            return vllm_error("Simulated failure.", fault.status, "InternalServerError")
        finished = False

        async def body() -> AsyncIterator[bytes]:
            nonlocal finished
            started = time.perf_counter()
            if fault.delay:
                await asyncio.sleep(fault.delay)
            sent = 0
            async with self.slots:
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
                            sse(
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
                yield sse(ids.final_chunk(plan, chat))
                if include_usage:
                    yield sse(ids.usage_chunk(plan, chat))
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
        n = len(ar_pieces(plan))
        return [t.ttft_s] + [t.token_s] * (n - 1)

    def _count_diffusion(self, plan: Plan) -> None:
        if not self.metrics.diffusion:
            return
        for canvas in plan.canvases:
            self.metrics.steps.inc(canvas.steps)
            self.metrics.positions.inc(plan.canvas_length)
            self.metrics.committed.inc(len(canvas.reasoning) + len(canvas.content))
        self.metrics.committed.inc(plan.tool_tokens)


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


async def _sleep(seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds)


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
