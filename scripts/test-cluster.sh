#!/usr/bin/env bash
# `npm run test:cluster`: the tests on a real Temporal cluster (jest project `cluster`), then the chaos run and the
# payment chaos run, then one summary line. Not part of `npm test`: the first run builds the Temporal server from source (minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step 'Temporal server v1.32.2 and its schema tool (scripts/temporal-server.sh; built once, then cached)'
bash scripts/temporal-server.sh >/dev/null

step 'build (npm run build: the cluster stack runs the compiled processes and the workflow bundle)'
npm run --silent build

step 'cluster tests (jest --selectProjects cluster)'
mkdir -p .data
results=.data/jest-cluster-results.json
jest_status=0
npx jest --selectProjects cluster --ci --json --outputFile="$results" "$@" || jest_status=$?
jest_summary="$(node scripts/jest-summary.cjs "$results" 2>/dev/null || echo 'no results')"

chaos_summary='not present'
chaos_status=0
if [[ -f test/cluster/chaos-run.ts ]]; then
  step 'chaos run (test/cluster/chaos-run.ts)'
  npx tsx test/cluster/chaos-run.ts || chaos_status=$?
  if [[ "$chaos_status" -eq 0 ]]; then chaos_summary='passed'; else chaos_summary="failed (exit $chaos_status)"; fi
fi

payment_chaos_summary='not present'
payment_chaos_status=0
if [[ -f test/cluster/payment-chaos-run.ts ]]; then
  step 'payment chaos run (test/cluster/payment-chaos-run.ts: localstripe, webhooks and kills, the reconciliation)'
  # A minute of load is four kills, every victim once or twice, and some forty bookings.
  npx tsx test/cluster/payment-chaos-run.ts --duration 60 || payment_chaos_status=$?
  if [[ "$payment_chaos_status" -eq 0 ]]; then
    payment_chaos_summary='passed'
  else
    payment_chaos_summary="failed (exit $payment_chaos_status)"
  fi
fi

echo "test:cluster: jest cluster tests: $jest_summary; chaos run: $chaos_summary; payment chaos run: $payment_chaos_summary"
if [[ "$jest_status" -ne 0 ]]; then exit "$jest_status"; fi
if [[ "$chaos_status" -ne 0 ]]; then exit "$chaos_status"; fi
exit "$payment_chaos_status"
