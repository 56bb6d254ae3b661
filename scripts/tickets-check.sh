#!/usr/bin/env bash
# `npm run tickets:check`: a ticket PDF from the test API rendered to PNG by pdftoppm, its QR code decoded by zbarimg,
# the payload verified against the ticket key set (jest project `tickets-check`). Not part of `npm test`: the first run
# downloads poppler-utils and zbar-tools into .tools/apt. What it saw lands in .data/tickets-check.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step 'pdftoppm and zbarimg (scripts/ticket-tools.sh; Debian packages unpacked into .tools/apt once)'
eval "$(bash scripts/ticket-tools.sh)"
echo "pdftoppm $(pdftoppm -v 2>&1 | head -n 1 | awk '{print $3}'), zbarimg $(zbarimg --version)"

step 'ticket PDF → PNG → QR → verified payload (jest --selectProjects tickets-check)'
mkdir -p .data
results=.data/jest-tickets-check-results.json
status=0
npx jest --selectProjects tickets-check --ci --json --outputFile="$results" "$@" || status=$?
echo "tickets:check: $(node scripts/jest-summary.cjs "$results" 2>/dev/null || echo 'no results')"
if [[ -f .data/tickets-check/summary.json ]]; then cat .data/tickets-check/summary.json; fi
exit "$status"
