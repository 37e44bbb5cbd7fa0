"""The routing decision: a pure function of (request, backend states, policy), no I/O, with its reasons.

Order of precedence:

1. explicit choices: the ``x-gateway-route`` header, then ``model`` naming a backend (its model id or
   name) or an alias. An explicit choice is honoured as given, with no fallback to another backend, or
   refused: 403 ``route_not_allowed`` when the credential may not choose a route (the header or an
   alias; ``model`` naming a backend is still allowed), 403 ``model_not_allowed`` when it may not use
   the chosen backend (whatever ``model`` says when the header chooses), 404 ``endpoint_not_served``
   when the backend does not serve the request's API, and 400 ``unsupported_on_backend`` when the choice
   is the diffusion backend and the request could crash its engine (images, logprobs);
2. operator rules from the configuration, first match wins;
3. the default policy: diffusion-incompatible and tool-heavy requests, code, thinking, and requests the
   difficulty scorer finds hard (score at or above the threshold) go to the autoregressive backend,
   everything else to the diffusion backend.

Then the candidates are narrowed to the backends the credential may use (403 ``model_not_allowed`` when
none is left, or when it may not ask for ``auto``) and ordered by availability (circuit breaker, health)
and load (spill-over), so that fallbacks and spill-over stay among them too.

Reason codes (``x-gateway-route``): ``explicit:header``, ``explicit:model``, ``explicit:alias``,
``rule:<name>``, ``incompatible:<what>``, ``tool-heavy:tools``, ``tool-heavy:tool_choice``,
``tool-heavy:agent-loop``, ``hard:code`` (code in the text), ``hard:thinking``, ``hard:score=0.91``
(the difficulty scorer, at or above the threshold), ``default:score=0.12`` (below it; ``default`` when the
scorer is off), ``adapted:temperature``, ``unserved:<backend>`` (it does not serve the request's API, e.g.
``/v1/messages``), ``unavailable:<backend>``, ``spillover``, ``queued``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.backends.view import BackendView
from gateway.errors import InvalidRequest, NotFound
from gateway.permissions import AUTO, check_auto, check_named, check_route_choice, within
from gateway.routing.features import CRASHING, RequestFeatures
from gateway.routing.scorer.model import Difficulty
from gateway.routing.settings import RoutingSettings, Rule

__all__ = ["AUTO", "BackendView", "Decision", "RouteInput", "decide"]


@dataclass(frozen=True, slots=True)
class RouteInput:
    model: str
    features: RequestFeatures
    principal: str = "anonymous"
    header_route: str | None = None
    # What the principal may use (permissions.Access, resolved by the caller): the backends that may serve
    # it (None: all), whether it may ask for auto, whether it may name a backend (model id, name, alias,
    # header), and whether it may choose a route (the header, an alias) at all.
    allowed_backends: frozenset[str] | None = None
    may_auto: bool = True
    may_name: bool = True
    may_override: bool = True
    # Difficulty scores at or above it are hard: the principal's own, else routing.scorer.threshold, else
    # the model's (resolved by the caller).
    threshold: float = 0.5


@dataclass(frozen=True, slots=True)
class Decision:
    candidates: tuple[str, ...]  # backend names, tried in order
    reasons: tuple[str, ...]
    drop_temperature: bool = False
    queue: bool = False  # wait for a slot on the first candidate instead of spilling over
    difficulty: Difficulty | None = None  # the scorer's verdict, when it ran
    threshold: float | None = None  # the threshold it was held against

    @property
    def score(self) -> float | None:
        return None if self.difficulty is None else self.difficulty.score


def decide(request: RouteInput, backends: Sequence[BackendView], policy: RoutingSettings) -> Decision:
    explicit = _explicit(request, backends, policy)
    if explicit is not None:
        backend, reason = explicit
        check_route_choice(request.may_override, by_model=reason == "explicit:model")
        if reason == "explicit:header":
            choice, param = request.header_route or backend.name, None
        else:
            choice, param = request.model, "model"
        check_named(request.may_name, request.allowed_backends, backend.name, choice, param=param)
        if request.features.endpoint not in backend.endpoints:
            raise _not_served(request, [backend.name])
        reasons = [reason]
        drop = False
        if backend.kind == "diffusion":
            crashing = sorted(set(request.features.incompatible) & CRASHING)
            if crashing:
                raise InvalidRequest(
                    f"{', '.join(crashing)} cannot be sent to the diffusion backend; use model 'auto'.",
                    code="unsupported_on_backend",
                )
            drop = request.features.temperature_unsupported and policy.temperature == "adapt"
            if drop:
                reasons.append("adapted:temperature")
        return Decision(
            candidates=(backend.name,),
            reasons=tuple(reasons),
            drop_temperature=drop,
            difficulty=request.features.difficulty,
            threshold=request.threshold,
        )

    check_auto(request.may_auto, request.model)
    target, reasons, may_fall_to_diffusion = _by_policy(request, backends, policy)
    order = [b for b in backends if b.name == target] + [b for b in backends if b.name != target]
    candidates = [b for b in order if b.name == target or b.kind != "diffusion" or may_fall_to_diffusion]
    candidates = within(request.allowed_backends, candidates)
    serving = [b for b in candidates if request.features.endpoint in b.endpoints]
    if not serving:
        raise _not_served(request, [b.name for b in candidates])
    if serving[0] is not candidates[0]:
        reasons.append(f"unserved:{candidates[0].name}")
    candidates = serving

    # Availability: a backend whose breaker is open or that fails its health probe goes last.
    if not candidates[0].available and any(b.available for b in candidates[1:]):
        reasons.append(f"unavailable:{candidates[0].name}")
        candidates = [b for b in candidates if b.available] + [b for b in candidates if not b.available]

    queue = False
    first = candidates[0]
    if first.kind == "diffusion" and first.in_flight >= first.max_concurrency:
        others = [b for b in candidates[1:] if b.kind != "diffusion" and b.available]
        mode = policy.spillover.mode
        if mode == "reroute" and others and _wait_on(first) > others[0].expected_latency:
            reasons.append("spillover")
            candidates = [others[0], *[b for b in candidates if b is not others[0]]]
        elif mode == "queue":
            reasons.append("queued")
            queue = True

    drop = (
        candidates[0].kind == "diffusion"
        and request.features.temperature_unsupported
        and policy.temperature == "adapt"
    )
    if drop:
        reasons.append("adapted:temperature")
    return Decision(
        candidates=tuple(b.name for b in candidates),
        reasons=tuple(reasons),
        drop_temperature=drop,
        queue=queue,
        difficulty=request.features.difficulty,
        threshold=request.threshold,
    )


def _not_served(request: RouteInput, names: list[str]) -> NotFound:
    return NotFound(
        f"The {request.features.endpoint} API is not served by {', '.join(names)}: "
        "no backend behind this gateway can answer it.",
        code="endpoint_not_served",
    )


def _wait_on(backend: BackendView) -> float:
    """Expected time to an answer on a full backend: its own latency plus the queue ahead, in batches."""
    ahead = backend.in_flight - backend.max_concurrency + 1
    return backend.expected_latency * (1 + ahead / backend.max_concurrency)


def _resolve(
    name: str, backends: Sequence[BackendView], policy: RoutingSettings
) -> tuple[BackendView, bool] | None:
    """A backend by model id or name, or by alias (second item True)."""
    for backend in backends:
        if name in (backend.model, backend.name):
            return backend, False
    target = aliases(backends, policy).get(name)
    if target is not None:
        for backend in backends:
            if backend.name == target:
                return backend, True
    return None


def aliases(backends: Sequence[BackendView], policy: RoutingSettings) -> dict[str, str]:
    if policy.aliases:
        return policy.aliases
    out: dict[str, str] = {}
    for alias, kind in (("fast", "diffusion"), ("quality", "autoregressive")):
        found = next((b.name for b in backends if b.kind == kind), None)
        if found is not None:
            out[alias] = found
    return out


def _explicit(
    request: RouteInput, backends: Sequence[BackendView], policy: RoutingSettings
) -> tuple[BackendView, str] | None:
    if request.header_route:
        found = _resolve(request.header_route, backends, policy)
        if found is None:
            raise InvalidRequest(
                f"x-gateway-route names no backend or alias: `{request.header_route[:100]}`.",
                code="unknown_route",
            )
        return found[0], "explicit:header"
    if request.model == AUTO:
        return None
    found = _resolve(request.model, backends, policy)
    if found is None:
        raise NotFound(
            f"The model `{request.model[:200]}` does not exist or you do not have access to it.",
            code="model_not_found",
            param="model",
        )
    return found[0], "explicit:alias" if found[1] else "explicit:model"


def _by_policy(
    request: RouteInput, backends: Sequence[BackendView], policy: RoutingSettings
) -> tuple[str, list[str], bool]:
    """The target backend, the reasons, and whether falling back to diffusion is acceptable."""
    f = request.features
    diffusion = next((b.name for b in backends if b.kind == "diffusion"), None)
    autoregressive = next((b.name for b in backends if b.kind == "autoregressive"), None)
    for rule in policy.rules:
        if _matches(rule, request):
            return rule.backend, [f"rule:{rule.name}"], not f.incompatible

    reasons = [f"incompatible:{what}" for what in f.incompatible]
    if f.temperature_unsupported and policy.temperature == "route":
        reasons.append("incompatible:temperature")
    incompatible = bool(reasons)
    if f.has_tools:
        reasons.append("tool-heavy:tools")
    if f.tool_choice_forced:
        reasons.append("tool-heavy:tool_choice")
    if f.agent_loop:
        reasons.append("tool-heavy:agent-loop")
    if f.code:
        reasons.append("hard:code")
    if f.thinking:
        reasons.append("hard:thinking")
    score = f.difficulty.score if f.difficulty is not None else None
    if _hard(request):
        reasons.append(f"hard:{_scored(request)}")
    if reasons and autoregressive is not None:
        return autoregressive, reasons, not incompatible and policy.fallback_to_diffusion
    target = diffusion or autoregressive or backends[0].name
    if not reasons:
        reasons = ["default"] if score is None else [f"default:{_scored(request)}"]
    return target, reasons, True


def _hard(request: RouteInput) -> bool:
    """The scorer's verdict: the score against the threshold."""
    d = request.features.difficulty
    return d is not None and d.score >= request.threshold


def _scored(request: RouteInput) -> str:
    """``score=0.41``."""
    d = request.features.difficulty
    return f"score={d.score:.2f}" if d is not None else "score=none"


def _matches(rule: Rule, request: RouteInput) -> bool:
    w, f = rule.when, request.features
    score = f.difficulty.score if f.difficulty is not None else None
    checks = (
        w.principals is None or request.principal in w.principals,
        w.endpoint is None or w.endpoint == f.endpoint,
        w.has_tools is None or w.has_tools == f.has_tools,
        w.code is None or w.code == f.code,
        w.hard is None or w.hard == _hard(request),
        w.min_score is None or (score is not None and score >= w.min_score),
        w.max_score is None or (score is not None and score <= w.max_score),
        w.thinking is None or w.thinking == f.thinking,
        w.min_messages is None or f.messages >= w.min_messages,
        w.max_messages is None or f.messages <= w.max_messages,
        w.min_prompt_chars is None or f.prompt_chars >= w.min_prompt_chars,
        w.max_prompt_chars is None or f.prompt_chars <= w.max_prompt_chars,
    )
    return all(checks)
