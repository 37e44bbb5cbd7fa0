"""The usage ledger: one row per finished request, kept in SQLite or PostgreSQL, read back by
``gateway usage`` and ``GET /v1/gateway/usage``."""
