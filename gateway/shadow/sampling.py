"""Which requests are shadowed: drawn when a request has been routed, checked once its answer went out.

``ShadowSampler.draw`` runs on the request's path, right after the routing decision: one random number
against the principal's share (``shadow.keys``, else ``shadow.tiers``, else ``shadow.share``) and, for the
few requests drawn, whether shadowing them can say anything about the router. Only a request the router
decided by its difficulty score is eligible, in the chat or completions API, with one answer (``n`` 1):
not a backend the client chose (``explicit``), not one an operator rule or a structural rule (tools, code,
thinking) decided (``rule``), never one the compatibility guard keeps off a backend (``incompatible``),
and only when the principal may use the other backend (``not_allowed``). A drawn request gets a
:class:`Sample` on its record, so that the answer the client receives is kept (gateway/proxy/attempt.py);
nothing else about the request changes.

``unready`` reads the record once the response is complete: a request that failed, fell back to another
backend or was served elsewhere than the decision first chose (spill-over, an unavailable backend) is not
shadowed, since its answer says nothing about the choice.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.auth.principal import Principal
from gateway.record import RequestRecord
from gateway.routing import Decision
from gateway.shadow.settings import ShadowSettings
from gateway.upstream.settings import BackendSettings

__all__ = ["Sample", "ShadowSampler", "bucket", "unready"]

# Route reasons whose rule, not the difficulty score, chose the backend.
_RULES = ("rule:", "tool-heavy:", "hard:code", "hard:thinking")
# The request was served by another backend than the decision's choice.
_REROUTED = ("spillover", "queued", "unavailable:", "unserved:")


def bucket(score: float) -> str:
    """The score's tenth, as a metric label: "0.0" to "0.9" (1.0 falls in "0.9")."""
    return f"{min(9, max(0, int(score * 10))) / 10:.1f}"


@dataclass(slots=True)
class Sample:
    """A request drawn for shadow evaluation, and what is known of it when its answer has gone out."""

    endpoint: str  # chat | completions
    payload: dict[str, Any]  # the request as the gateway read it (thinking policy applied), a copy
    routed_to: BackendSettings  # the backend the decision chose: the client's answer is its
    other: BackendSettings  # the backend the shadow request goes to
    score: float
    threshold: float | None
    reasons: tuple[str, ...]
    limit: int  # the token limit both answers are held to (the request's own, else shadow.max_tokens)
    # Filled in from the record once the response is complete.
    request_id: str = ""
    principal: str | None = None
    principal_kind: str | None = None
    tier: str | None = None
    answer: str = ""
    prompt_tokens: int = 0
    answer_tokens: int = 0

    @property
    def diffusion_routed(self) -> bool:
        return self.routed_to.kind == "diffusion"


class ShadowSampler:
    def __init__(
        self,
        settings: ShadowSettings,
        backends: Sequence[BackendSettings],
        on_skip: Callable[[str], None],
        rng: Callable[[], float] = random.random,
    ) -> None:
        """``on_skip(reason)``: a drawn request that is not shadowed, and why."""
        self._settings = settings
        self._backends = {b.name: b for b in backends}
        self._catalog = [(b.name, b.model) for b in backends]
        self._first = {kind: next((b for b in backends if b.kind == kind), None) for kind in _KINDS}
        self._on_skip = on_skip
        self._rng = rng

    def share(self, principal: Principal) -> float:
        settings = self._settings
        if principal.kind == "key" and principal.name in settings.keys:
            return settings.keys[principal.name]
        if principal.tier is not None and principal.tier in settings.tiers:
            return settings.tiers[principal.tier]
        return settings.share

    def draw(
        self, principal: Principal, endpoint: str, payload: dict[str, Any], decision: Decision
    ) -> Sample | None:
        """A sample of this routed request, or None (not drawn, or drawn and not eligible: counted)."""
        share = self.share(principal)
        if share <= 0 or self._rng() >= share:
            return None
        routed = self._backends[decision.candidates[0]]
        other = self._first[_KINDS[1 - _KINDS.index(routed.kind)]]
        why = _ineligible(endpoint, payload, decision)
        if why is None and (other is None or not _may_use(principal, self._catalog, other, endpoint)):
            why = "not_allowed"
        if why is not None or other is None or decision.score is None:
            self._on_skip(why or "unscored")
            return None
        limit = _limit(payload)
        return Sample(
            endpoint=endpoint,
            payload=orjson.loads(orjson.dumps(payload)),  # the proxy's copy may change while it runs
            routed_to=routed,
            other=other,
            score=decision.score,
            threshold=decision.threshold,
            reasons=decision.reasons,
            limit=limit if limit is not None else self._settings.max_tokens,
        )


_KINDS = ("diffusion", "autoregressive")


def _ineligible(endpoint: str, payload: dict[str, Any], decision: Decision) -> str | None:
    if endpoint not in ("chat", "completions"):
        return "api"
    if payload.get("n") not in (None, 1):
        return "n"
    reasons = decision.reasons
    if any(r.startswith("explicit:") for r in reasons):
        return "explicit"
    if any(r.startswith("incompatible:") for r in reasons):
        return "incompatible"
    if any(r.startswith(_RULES) for r in reasons):
        return "rule"
    if decision.score is None:
        return "unscored"
    return None


def _may_use(
    principal: Principal, catalog: list[tuple[str, str]], backend: BackendSettings, endpoint: str
) -> bool:
    """Whether ``principal``'s requests may go to ``backend`` at all (a key kept off a backend keeps its
    prompts off it, shadow requests included), and the backend serves the API."""
    allowed = principal.access(catalog).serves(backend.name)
    return allowed and endpoint in backend.endpoints


def _limit(payload: dict[str, Any]) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = payload.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def unready(record: RequestRecord, sample: Sample) -> str | None:
    """Why a drawn request is not shadowed after all, now that its response is complete; None: it is."""
    if record.outcome != "ok" or record.status != 200 or record.answer is None:
        return "failed"
    if record.fallbacks:
        return "fallback"
    if record.backend != sample.routed_to.name or any(r.startswith(_REROUTED) for r in record.route_reasons):
        return "rerouted"
    return None
