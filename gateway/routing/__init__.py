"""Where a request goes: a pure decision over the request, the backends' state and the policy."""

from gateway.routing.decision import AUTO, BackendView, Decision, RouteInput, decide
from gateway.routing.features import RequestFeatures, extract_features

__all__ = ["AUTO", "BackendView", "Decision", "RequestFeatures", "RouteInput", "decide", "extract_features"]
