"""The routing plan of a parsed request: shared by the proxy loop, ``POST /v1/gateway/route`` and
``gateway route``, so that the dry run and the live request decide alike.

``plan_route`` hands the decision what the principal may use (the decision keeps every candidate inside
it) and applies the speed tier; ``describe`` is the dry run's answer; ``dry_run_endpoint`` the API a
dry-run body is read in.
"""

from __future__ import annotations

from starlette.datastructures import Headers

from gateway.auth.principal import Principal
from gateway.config import Settings
from gateway.errors import InvalidRequest
from gateway.proxy.body import ProxiedRequest
from gateway.proxy.dialects import PATHS, Endpoint, guess_endpoint
from gateway.routing import AUTO, BackendView, Decision, RouteInput, decide, extract_features
from gateway.routing.scorer.model import ScorerModel
from gateway.upstream.settings import BackendSettings

__all__ = [
    "EXPLAIN_FEATURES",
    "ROUTE_HEADER",
    "SPEED_HEADER",
    "describe",
    "dry_run_endpoint",
    "plan_route",
]

ROUTE_HEADER = "x-gateway-route"
SPEED_HEADER = "x-gateway-speed"
# How many of the features that pushed the difficulty score most a dry run lists.
EXPLAIN_FEATURES = 5


def plan_route(
    settings: Settings,
    views: list[BackendView],
    parsed: ProxiedRequest,
    headers: Headers,
    principal: Principal,
    scorer: ScorerModel | None,
    *,
    explain: int = 0,
) -> tuple[Decision, int | None]:
    """The routing decision for a parsed request, and the diffusion step cap of its speed tier."""
    policy = settings.routing
    # A request that names its backend (the route header, or a model other than auto) is honoured as
    # given, so its difficulty decides nothing: it is scored only for a dry run, which shows the score.
    named = bool(headers.get(ROUTE_HEADER)) or parsed.model != AUTO
    features = extract_features(
        parsed.view, parsed.endpoint, None if named and not explain else scorer, explain=explain
    )
    threshold = principal.route_threshold or policy.scorer.threshold or (scorer.threshold if scorer else 0.5)
    access = principal.access((view.name, view.model) for view in views)
    decision = decide(
        RouteInput(
            model=parsed.model,
            features=features,
            principal=principal.name,
            header_route=headers.get(ROUTE_HEADER),
            allowed_backends=access.backends,
            may_auto=access.auto,
            may_name=access.named,
            may_override=principal.may_override,
            threshold=threshold,
        ),
        views,
        policy,
    )
    tier = headers.get(SPEED_HEADER) or principal.speed_tier
    if tier is None:
        return decision, None
    steps = policy.speed_tiers.get(tier)
    if steps is None:
        known = ", ".join(sorted(policy.speed_tiers)) or "none"
        raise InvalidRequest(f"Unknown speed tier `{tier[:50]}` (known: {known}).", code="unknown_speed_tier")
    return decision, steps


def describe(
    decision: Decision, steps: int | None, backends: dict[str, BackendSettings]
) -> dict[str, object]:
    out: dict[str, object] = {
        "backend": decision.candidates[0],
        "model": backends[decision.candidates[0]].model,
        "candidates": list(decision.candidates),
        "reasons": list(decision.reasons),
        "drop_temperature": decision.drop_temperature,
        "queue": decision.queue,
        "diffusion_max_steps": steps,
    }
    difficulty = decision.difficulty
    if difficulty is not None:
        out["difficulty"] = {
            "score": difficulty.score,
            "threshold": decision.threshold,
            # What the system prompt and the earlier turns added to the logit (> 0: harder).
            "context": round(difficulty.context, 3),
            "top_features": [c.as_dict() for c in difficulty.top],
        }
    return out


def dry_run_endpoint(body: bytes, api: str | None, headers: Headers) -> Endpoint:
    """The dialect a dry-run body is read in (see ProxyHandler.explain)."""
    if api is not None:
        if api not in PATHS:
            known = ", ".join(sorted(PATHS))
            raise InvalidRequest(f"Unknown api `{api[:50]}` (one of: {known}).", param="api")
        return api  # narrowed to an Endpoint by the check above
    if "anthropic-version" in headers:
        return "messages"
    return guess_endpoint(body)
