#!/usr/bin/env bash
# `npm run contracts:release`: records the working tree's contracts as the released baseline `npm run contracts:check`
# guards (the buf image proto/baseline/contracts.binpb, and the protos and OpenAPI document in contracts/released/),
# and first registers them as new versions in the schema registry SCHEMA_REGISTRY_URL names, when it is set.
# Run it when a contract version ships (or a breaking change was agreed), then commit both folders.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -n "${SCHEMA_REGISTRY_URL:-}" ]]; then
  # Before anything is written: a registry that refuses the versions as breaking leaves the baseline as it was.
  node_modules/.bin/tsx scripts/registry-check.ts release
fi

baseline=proto/baseline/contracts.binpb
mkdir -p "$(dirname "$baseline")"
# Source info only carries comments and line numbers, which the breaking check does not need from the baseline.
node_modules/.bin/buf build --exclude-source-info -o "$baseline"
echo "wrote $baseline"
node_modules/.bin/tsx scripts/registry-check.ts record
