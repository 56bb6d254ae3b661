#!/usr/bin/env bash
# `npm test`: every check the project promises, in the order that fails fastest, ending in one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step 'lint (eslint, prettier)'
npx eslint . --max-warnings 0
npx prettier --check . --log-level warn

step 'type check (tsc --noEmit)'
npx tsc --noEmit -p .

step 'import boundaries (dependency-cruiser: layers, no module or folder cycle)'
npx depcruise src dev --config .dependency-cruiser.cjs

# The schema-registry half of the contract check starts a JVM; npm run contracts:registry runs it in CI.
step 'contracts (buf lint, buf breaking, generated code up to date)'
bash scripts/check-contracts.sh --without-registry

step 'OpenAPI lint (redocly; spectral:oas, where a warning fails too)'
npx redocly lint openapi/openapi.yaml --format=summary
npx spectral lint openapi/openapi.yaml --ruleset .spectral.yaml --fail-severity=warn

step 'monitoring (promtool check config, check rules, test rules; Grafana dashboard queries)'
bash scripts/check-monitoring.sh

step 'workflow tier (jest: the booking workflow on the time-skipping test server, its activities in-memory fakes)'
npx jest --ci --selectProjects workflow

step 'unit and integration tests (jest, real PostgreSQL and Temporal)'
mkdir -p .data
results=.data/jest-results.json
status=0
# --forceExit: on two cores jest runs every suite in one process, and since tracing and metrics came in something
# of one suite outlives its teardown and keeps that process from ending after the summary (not yet traced to a
# suite; each file alone, run with --detectOpenHandles, exits cleanly).
# The `cluster` project is `npm run test:cluster`'s (a real Temporal cluster, built from source on first use).
npx jest --ci --forceExit --selectProjects unit integration --json --outputFile="$results" "$@" || status=$?
# jest's own summary is not a line CI can read; say it plainly.
echo "tests: $(node scripts/jest-summary.cjs "$results" || echo 'no results')"
exit "$status"
