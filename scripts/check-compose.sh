#!/usr/bin/env bash
# Validates docker-compose.yml without a Docker engine, with its defaults and with deploy/compose.env.example.
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

# A blank environment keeps variables exported in this shell (a local DATABASE_URL, say) out of the check.
run_config() {
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" docker-compose -f docker-compose.yml "$@" config -q
}

run_config
echo 'docker-compose.yml is valid with its defaults'
run_config --env-file deploy/compose.env.example
echo 'docker-compose.yml is valid with deploy/compose.env.example'
