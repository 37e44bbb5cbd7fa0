"""The proxy loop for ``/v1/chat/completions`` and ``/v1/completions``.

read and check the body → decide the route (what the principal may use is checked there) → admit it
against the principal's limits, its tokens reserved → try the candidates in order → relay the answer.

* A candidate is left for the next one on a connect error, a timeout before the first byte, a 5xx or
  429, or (diffusion answers only) a failed quality check; at most ``routing.retry_budget`` times, and
  never once a byte reached the client.
* Before the first byte an upstream failure is an OpenAI error with 502, 503 or 504; after it, the
  stream ends with an in-band ``data: {"error": ...}`` event and ``data: [DONE]`` (docs/peers.md #2).
* Every answer says why: ``x-gateway-backend``, ``x-gateway-route`` (reason codes) and, when one happened,
  ``x-gateway-fallback`` (``from>to:reason``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import orjson
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from gateway.auth.principal import Principal
from gateway.backends.state import BackendPool
from gateway.config import Settings
from gateway.errors import UpstreamFailure
from gateway.limits.limiter import Limiter
from gateway.proxy.attempt import CLIENT_CLOSED, Attempt
from gateway.proxy.body import ProxiedRequest, parse_request, read_body, upstream_body
from gateway.proxy.cost import RequestCost, charge_cut_short
from gateway.proxy.dialects import PATHS, Endpoint
from gateway.proxy.headers import FORWARDED, upstream_request_headers
from gateway.proxy.outcome import Outcome
from gateway.proxy.pacing import PACING_HEADER, Schedule, pacing_budget
from gateway.proxy.planning import (
    EXPLAIN_FEATURES,
    ROUTE_HEADER,
    SPEED_HEADER,
    describe,
    dry_run_endpoint,
    plan_route,
)
from gateway.proxy.thinking import apply_thinking
from gateway.record import DiffusionRun, RequestRecord
from gateway.relay import ClientDisconnected, cancel_on_disconnect
from gateway.routing import Decision
from gateway.routing.scorer.model import ScorerModel
from gateway.shadow.sampling import ShadowSampler
from gateway.upstream import UpstreamClient
from gateway.upstream.settings import BackendSettings, DiffusionSettings
from gateway.wire import BACKEND_HEADER

__all__ = ["BACKEND_HEADER", "FALLBACK_HEADER", "ROUTE_HEADER", "SPEED_HEADER", "ProxyHandler"]

FALLBACK_HEADER = "x-gateway-fallback"


class ProxyHandler:
    def __init__(
        self,
        settings: Settings,
        upstream: UpstreamClient,
        pool: BackendPool,
        limiter: Limiter,
        *,
        scorer: ScorerModel | None = None,
        shadow: ShadowSampler | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._settings = settings
        self._policy = settings.routing
        self._backends = {b.name: b for b in settings.backends}
        self._upstream = upstream
        self._pool = pool
        self._limiter = limiter
        self._scorer = scorer
        self._shadow = shadow
        self._clock = clock
        self._forwarded = FORWARDED | settings.edge.forward_headers

    # ---- the decision, shared with POST /v1/gateway/route and `gateway route` ----------------------------

    async def plan(
        self, parsed: ProxiedRequest, headers: Headers, principal: Principal, *, explain: int = 0
    ) -> tuple[Decision, int | None]:
        return plan_route(
            self._settings, self._pool.views(), parsed, headers, principal, self._scorer, explain=explain
        )

    def _parse(self, body: bytes, endpoint: Endpoint, principal: Principal) -> ProxiedRequest:
        """The body as the proxy loop and the dry run both see it, thinking policy applied."""
        server = self._settings.server
        parsed = parse_request(
            body,
            endpoint,
            max_n=server.max_n,
            max_output_tokens=server.max_output_tokens,
            max_depth=server.max_json_depth,
        )
        if endpoint in ("chat", "responses"):  # vLLM reads chat_template_kwargs on both
            apply_thinking(parsed.payload, principal, endpoint)  # before routing: thinking on routes as hard
        return parsed

    async def explain(self, request: Request, principal: Principal) -> dict[str, object]:
        """What ``handle`` would do with this body, as JSON: POST /v1/gateway/route.

        The dialect is the ``api`` query parameter's, else the Messages API when the client sends
        ``anthropic-version`` (Anthropic's SDKs always do), else guessed from the body's fields; the
        body then goes through the same parsing, thinking policy and decision as a live request.
        """
        body = await read_body(
            request, self._settings.server.max_body_bytes, self._settings.edge.max_body_encodings
        )
        endpoint = dry_run_endpoint(body, request.query_params.get("api"), request.headers)
        parsed = self._parse(body, endpoint, principal)
        decision, steps = await self.plan(parsed, request.headers, principal, explain=EXPLAIN_FEATURES)
        return describe(decision, steps, self._backends)

    # ---- the proxy loop ---------------------------------------------------------------------------------

    async def handle(
        self, request: Request, endpoint: Endpoint, principal: Principal, record: RequestRecord
    ) -> Response:
        server = self._settings.server
        body = await read_body(request, server.max_body_bytes, self._settings.edge.max_body_encodings)
        parsed = self._parse(body, endpoint, principal)
        record.stream = parsed.stream
        record.model = parsed.model  # the usage ledger's and the trace's requested model
        if record.trace is not None:
            record.trace.request(parsed)
        telemetry = self._settings.telemetry
        if telemetry.log_content:
            view = parsed.view
            prompt = view.get("messages", view.get("prompt"))
            record.content = {"prompt": orjson.dumps(prompt).decode()}
            record.content_limit = telemetry.log_content_max_chars
        decision, steps = await self.plan(parsed, request.headers, principal)
        # Admitted only now: a permission refusal (in plan) wins over a limit, and the token budgets
        # can reserve what this body may spend.
        cost = RequestCost(parsed)
        admission = await self._limiter.admit(principal, cost)
        record.rate_headers = admission.headers
        record.on_end.append(admission.finish)
        record.route_reasons = decision.reasons
        record.route_score = decision.score
        record.routed_to = decision.candidates[0]
        if self._shadow is not None:  # a few requests are also answered elsewhere, once this one is done
            record.shadow = self._shadow.draw(principal, endpoint, parsed.payload, decision)
        # Pacing and reasoning stripping know the chat and completions wire formats only.
        openai = endpoint in ("chat", "completions")
        pacing = (
            pacing_budget(request.headers.get(PACING_HEADER), principal.pacing, self._settings.pacing)
            if parsed.stream and openai
            else None
        )
        strip = principal.strip_reasoning and openai
        try:
            return await cancel_on_disconnect(
                request.receive, self._run(request, parsed, decision, steps, record, cost, strip, pacing)
            )
        except ClientDisconnected:
            record.outcome = "disconnected"
            if record.backend is not None:  # sent: the backend read the prompt before the hang-up
                charge_cut_short(record, cost)
            return Response(status_code=CLIENT_CLOSED)

    async def _run(
        self,
        request: Request,
        parsed: ProxiedRequest,
        decision: Decision,
        steps: int | None,
        record: RequestRecord,
        cost: RequestCost,
        strip_reasoning: bool = False,
        pacing: float | None = None,
    ) -> Response:
        if decision.queue:
            await self._queue(decision.candidates[0])
        attempts = decision.candidates[: 1 + self._policy.retry_budget]
        fallbacks: list[str] = []
        outcome = Outcome()
        backend: BackendSettings | None = None
        for index, name in enumerate(attempts):
            backend = self._backends[name]
            state = self._pool[name]
            following = attempts[index + 1] if index + 1 < len(attempts) else None
            record.backend = name
            if not state.breaker.allow():
                outcome = _breaker_open(name)
            else:
                attempt = self._attempt(request, parsed, decision, steps, record, backend, following)
                attempt.strip_reasoning = strip_reasoning
                attempt.cost = cost
                if pacing is not None and backend.kind == "diffusion":
                    # Only diffusion streams come in whole canvases; token streams keep their bytes.
                    attempt.pacing = Schedule(pacing, self._settings.pacing.interval)
                lease = state.lease(self._clock)
                handed_over = False
                try:
                    if parsed.stream:
                        outcome, upstream_response, held = await attempt.open_stream()
                        if upstream_response is not None:
                            response: Response = attempt.stream_response(
                                upstream_response, held, parsed.client_wants_usage, on_end=lease.release
                            )
                            handed_over = True  # from here on the stream's end releases the slot
                            state.breaker.success()
                            return _with_why(response, backend, decision, fallbacks)
                    else:
                        outcome = await attempt.unary()
                except BaseException:
                    state.breaker.abandon()
                    raise
                finally:
                    if not handed_over:
                        lease.release()
                if outcome.backend_failed:
                    state.breaker.failure()
                else:
                    state.breaker.success()
            if outcome.backend_failed or outcome.retry == "status_429":
                record.upstream_errors.append((name, _error_kind(outcome.retry)))
            if outcome.retry is None or following is None:
                break
            fallbacks.append(f"{name}>{following}:{outcome.retry}")
            record.fallbacks.append((name, following, outcome.retry))

        assert backend is not None
        if outcome.outcome != "ok":
            record.outcome = outcome.outcome
        if outcome.error is not None:
            outcome.error.headers.update(_why(backend, decision, fallbacks))
            raise outcome.error
        assert outcome.response is not None
        record.ttfb = self._clock() - record.started
        return _with_why(outcome.response, backend, decision, fallbacks)

    def _attempt(
        self,
        request: Request,
        parsed: ProxiedRequest,
        decision: Decision,
        steps: int | None,
        record: RequestRecord,
        backend: BackendSettings,
        following: str | None,
    ) -> Attempt:
        diffusion = backend.kind == "diffusion"
        record.diffusion = _diffusion_run(backend, parsed.payload, steps) if diffusion else None
        # Diffusion answers are checked when an autoregressive backend is next in line to re-run them.
        checked = diffusion and following is not None and self._backends[following].kind != "diffusion"
        return Attempt(
            upstream=self._upstream,
            backend=backend,
            endpoint=parsed.endpoint,
            path=PATHS[parsed.endpoint],
            body=upstream_body(
                parsed,
                backend.model,
                drop_temperature=decision.drop_temperature and diffusion,
                diffusion_max_steps=steps if diffusion else None,
            ),
            headers=upstream_request_headers(
                request.headers.items(), backend, record.request_id, self._forwarded
            ),
            record=record,
            request_payload=parsed.view,
            quality=self._policy.quality if checked else None,
            clock=self._clock,
        )

    async def _queue(self, name: str) -> None:
        spill = self._policy.spillover
        if self._pool.waiting >= spill.max_queue:
            raise UpstreamFailure(
                "The diffusion backend's queue is full; retry shortly.",
                status=503,
                code="backend_busy",
                backend=name,
            )
        self._pool.waiting += 1
        try:
            if not await self._pool[name].wait_for_slot(spill.queue_timeout):
                raise UpstreamFailure(
                    "No slot freed up on the backend in time.", status=503, code="backend_busy", backend=name
                )
        finally:
            self._pool.waiting -= 1


def _breaker_open(name: str) -> Outcome:
    error = UpstreamFailure(
        "The backend is failing; the gateway is giving it time to recover.",
        status=503,
        code="backend_unavailable",
        backend=name,
    )
    return Outcome(error=error, retry="breaker_open", outcome="upstream_connect")


def _with_why(
    response: Response,
    backend: BackendSettings,
    decision: Decision,
    fallbacks: list[str],
) -> Response:
    response.raw_headers += [(k.encode(), v.encode()) for k, v in _why(backend, decision, fallbacks).items()]
    return response


def _why(backend: BackendSettings, decision: Decision, fallbacks: list[str]) -> dict[str, str]:
    headers = {BACKEND_HEADER: backend.name, ROUTE_HEADER: ",".join(decision.reasons)}
    if fallbacks:
        headers[FALLBACK_HEADER] = ",".join(fallbacks)
    return headers


def _error_kind(retry: str | None) -> str:
    if retry is not None and retry.startswith("status_5"):
        return "status_5xx"
    return retry or "broken"


def _diffusion_run(
    backend: BackendSettings, payload: dict[str, object], tier_steps: int | None
) -> DiffusionRun:
    """The canvas and step cap this request runs with: the server's, lowered by the request's own
    ``vllm_xargs`` or its speed tier (vLLM clamps both to the server's values, docs/backends.md)."""
    served = backend.diffusion or DiffusionSettings()
    xargs = payload.get("vllm_xargs")
    asked_steps = xargs.get("diffusion_max_steps") if isinstance(xargs, dict) else None
    asked_canvas = xargs.get("diffusion_canvas_length") if isinstance(xargs, dict) else None
    steps = served.max_denoising_steps
    for cap in (asked_steps, tier_steps):
        if isinstance(cap, int) and not isinstance(cap, bool):
            steps = min(steps, max(1, cap))
    canvas = served.canvas_length
    if isinstance(asked_canvas, int) and not isinstance(asked_canvas, bool) and 1 <= asked_canvas <= canvas:
        canvas = asked_canvas
    return DiffusionRun(served.sampler, served.entropy_bound, canvas, steps)
