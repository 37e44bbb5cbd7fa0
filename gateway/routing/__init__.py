"""Where a request goes: a pure decision over the request, the backends' state and the policy.

decision.py (the decision), features.py (what it reads from a request), settings.py (the ``routing:``
section); scorer/ (the difficulty scorer the decision consults).
"""

from gateway.routing.decision import AUTO, BackendView, Decision, RouteInput, decide
from gateway.routing.features import RequestFeatures, extract_features

__all__ = ["AUTO", "BackendView", "Decision", "RequestFeatures", "RouteInput", "decide", "extract_features"]
