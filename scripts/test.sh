#!/usr/bin/env bash
# `npm test`: every check the project promises, ending in one summary line. The static checks and the workflow tier
# run beside the unit and integration tests, which mostly wait on their servers and timers.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

# In the order that fails fastest; the first failure ends them.
static_checks() {
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
}

mkdir -p .data
static_log=.data/static-checks.log
# Their output is held back and shown whole once the tests are done, so it never interleaves with jest's. Niced: the
# tests' answer deadlines come first, the checks take what CPU is left.
(
  set -euo pipefail
  renice -n 10 -p "$BASHPID" >/dev/null || true
  static_checks
) >"$static_log" 2>&1 &
static_pid=$!

step 'unit and integration tests (jest, real PostgreSQL and Temporal; the static checks run beside them)'
results=.data/jest-results.json
# A run that dies before writing its results must not be summarised with the last run's.
rm -f "$results"
status=0
# The `cluster` project is `npm run test:cluster`'s (a real Temporal cluster, built from source on first use).
# Two workers against the one PostgreSQL and Temporal server, even on two cores: the suites mostly wait on their
# servers and timers, and every suite keeps to its own trips, bookings and task queues (the two whose processes serve
# the standard queues take turns: test/support/exclusive.ts).
npx jest --ci --maxWorkers=2 --selectProjects unit integration --json --outputFile="$results" "$@" || status=$?

static_status=0
wait "$static_pid" || static_status=$?
printf '\n== static checks and the workflow tier (run beside the tests above)\n'
cat "$static_log"
if [[ "$static_status" -ne 0 ]]; then
  echo "static checks: failed (exit $static_status) at the last step shown above"
  [[ "$status" -ne 0 ]] || status="$static_status"
fi
# jest's own summary is not a line CI can read; say it plainly.
echo "tests: $(node scripts/jest-summary.cjs "$results" || echo 'no results')"
exit "$status"
