#!/usr/bin/env bash
# Validates docker-compose.yml without a Docker engine: required secrets fail fast, the example env passes, and the
# resolved file follows the deployment rules (scripts/check-compose-policy.cjs).
set -euo pipefail

cd "$(dirname "$0")/.."

if ! command -v docker-compose >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "docker-compose is not installed; install it (Debian: apt-get install docker-compose) or run as root" >&2
    exit 1
  fi
  # Debian's docker-compose 1.29 parses and validates a compose file without talking to an engine.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A blank environment and an explicit env file keep variables exported in this shell (a local DATABASE_URL, say)
# and a developer's own .env out of the check.
run_config() {
  local env_file="$1"
  shift
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" docker-compose -f docker-compose.yml --env-file "$env_file" config "$@"
}

# Every secret is required: without any one of them, `config` must stop and name it.
required=(POSTGRES_PASSWORD BOOKING_DB_PASSWORD TEMPORAL_DB_PASSWORD ENCRYPTION_KEYS ENCRYPTION_ACTIVE_KEY_ID
  BLIND_INDEX_KEY GRAFANA_ADMIN_PASSWORD)
: >"$work/empty.env"
if run_config "$work/empty.env" -q 2>"$work/error.txt"; then
  echo 'docker-compose.yml resolved without any secret: required secrets must fail fast' >&2
  exit 1
fi
for variable in "${required[@]}"; do
  grep -v "^$variable=" deploy/compose.env.example >"$work/without.env"
  if run_config "$work/without.env" -q 2>"$work/error-$variable.txt"; then
    echo "docker-compose.yml resolved without $variable: it must be required" >&2
    exit 1
  fi
  if ! grep -q "$variable is required" "$work/error-$variable.txt"; then
    echo "docker-compose config failed without $variable, but its message does not name it:" >&2
    cat "$work/error-$variable.txt" >&2
    exit 1
  fi
done
echo "docker-compose.yml stops without each of its ${#required[@]} required secrets, naming it, e.g.:"
grep -o 'in service .*ENCRYPTION_KEYS is required.*' "$work/error-ENCRYPTION_KEYS.txt"

run_config deploy/compose.env.example -q
echo 'docker-compose.yml is valid with deploy/compose.env.example'

# The secrets generator writes a usable .env (here into the temporary folder, never over a real one).
npx --no-install tsx scripts/generate-compose-secrets.ts "$work/generated.env" >/dev/null
run_config "$work/generated.env" -q
echo 'docker-compose.yml is valid with a .env from npm run compose:secrets'

run_config deploy/compose.env.example >"$work/resolved.yml"
node scripts/check-compose-policy.cjs <"$work/resolved.yml"
