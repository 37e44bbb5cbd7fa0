"""Where a request goes: a pure decision over the request and the configured backends."""

from gateway.routing.decision import AUTO, Decision, decide

__all__ = ["AUTO", "Decision", "decide"]
