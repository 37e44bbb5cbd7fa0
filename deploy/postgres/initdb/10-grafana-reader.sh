#!/bin/sh
# Runs once, when the ledger's PostgreSQL initialises its data directory (compose profile ledger).
# A role for Grafana that may only read what the gateway writes: the gateway creates the usage tables at
# its start, after this, so the grant covers tables the gateway role creates from now on.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v reader_password="$LEDGER_GRAFANA_PASSWORD" <<'SQL'
CREATE ROLE grafana LOGIN PASSWORD :'reader_password';
GRANT CONNECT ON DATABASE gateway TO grafana;
GRANT USAGE ON SCHEMA public TO grafana;
ALTER DEFAULT PRIVILEGES FOR ROLE gateway IN SCHEMA public GRANT SELECT ON TABLES TO grafana;
SQL
