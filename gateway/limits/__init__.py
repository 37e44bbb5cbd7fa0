"""Limits and admission control: per-principal request, token and concurrency limits, and the shared
state (memory or Redis) that makes them hold across workers and replicas."""
