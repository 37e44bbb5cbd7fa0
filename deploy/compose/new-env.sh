#!/bin/sh
# Writes .env for compose from .env.example with every secret generated: the vLLM servers' API keys and
# the Grafana and ledger passwords. Placeholders are never written, so no stack starts with a guessable
# secret; compose refuses to start while a required one is empty.
#   sh deploy/compose/new-env.sh            # writes ./.env (run from the repository root)
#   sh deploy/compose/new-env.sh other.env  # or another file
set -eu
out="${1:-.env}"
example="$(dirname "$0")/../../.env.example"
if [ -e "$out" ]; then
  echo "$out exists: not overwritten (delete it first to generate new secrets)" >&2
  exit 1
fi
secret() {
  # 32 random bytes as hex, from the kernel's generator (no openssl needed).
  od -An -N32 -tx1 /dev/urandom | tr -d ' \n'
}
umask 077
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    *_API_KEY= | *_PASSWORD=) printf '%s%s\n' "$line" "$(secret)" ;;
    *) printf '%s\n' "$line" ;;
  esac
done < "$example" > "$out"
echo "wrote $out with generated secrets (mode 600); set HF_TOKEN there for gated checkpoints" >&2
