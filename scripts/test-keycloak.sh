#!/usr/bin/env bash
# `npm run test:keycloak`: the API against a real Keycloak (jest project `keycloak`), then one summary line. Not part
# of `npm test`: the first run downloads Keycloak from Maven Central, and every run waits for it to start.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step 'Keycloak 26.4.7 and a Java 21+ to run it (scripts/keycloak.sh; downloaded once, then cached in .tools/)'
bash scripts/keycloak.sh >/dev/null

step 'Keycloak tests (jest --selectProjects keycloak)'
mkdir -p .data
results=.data/jest-keycloak-results.json
status=0
npx jest --selectProjects keycloak --ci --json --outputFile="$results" "$@" || status=$?
echo "test:keycloak: $(node scripts/jest-summary.cjs "$results" 2>/dev/null || echo 'no results')"
exit "$status"
