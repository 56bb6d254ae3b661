#!/usr/bin/env bash
# `npm run contracts:registry`: one local Apicurio Registry for the whole step, in which the working tree's contracts
# are checked against contracts/released/ and then the registry tests run (jest project `registry`). Not part of
# `npm test`: the first run downloads the registry from Maven Central, and every run starts a JVM.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step 'Apicurio Registry 3.3.3 and a Java 21+ to run it (scripts/registry.sh; downloaded once, then cached in .tools/)'
bash scripts/registry.sh install >/dev/null

mkdir -p .data
results=.data/jest-registry-results.json
rm -f "$results"
status=0
# The registry tests read LOCAL_SCHEMA_REGISTRY_URL only, so a shared SCHEMA_REGISTRY_URL in the caller's
# environment never receives their throwaway groups.
bash scripts/registry.sh run -- bash -c '
  set -euo pipefail
  printf "\n== %s\n" "working tree against contracts/released/ (scripts/registry-check.ts check --seed)"
  node_modules/.bin/tsx scripts/registry-check.ts check --seed
  printf "\n== %s\n" "registry tests (jest --selectProjects registry)"
  npx jest --selectProjects registry --ci --json --outputFile="$0" "$@"
' "$results" "$@" || status=$?
echo "contracts:registry: $(node scripts/jest-summary.cjs "$results" 2>/dev/null || echo 'no results')"
exit "$status"
