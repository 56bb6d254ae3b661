#!/usr/bin/env bash
# `npm run contracts:release -- <name>`: records the working tree's contracts as the released baseline
# `npm run contracts:check` guards (the buf image proto/baseline/contracts.binpb, the protos, the OpenAPI document and
# the partner webhooks' AsyncAPI document in contracts/released/, and the OpenAPI document as the next folder
# contracts/releases/<NN>-<name>/ with the typed-client breaks recorded for it), and first registers them as new
# versions in the schema registry SCHEMA_REGISTRY_URL names, when it is set (the AsyncAPI document with each message's
# payload as a JSON Schema artifact). Run it when a contract version ships (or a breaking change was agreed), then
# commit the folders.
set -euo pipefail
cd "$(dirname "$0")/.."

name="${1:-}"
if [[ $# -ne 1 || ! "$name" =~ ^[a-z0-9]+(-[a-z0-9]+)*$ ]]; then
  echo "usage: npm run contracts:release -- <name> (lower-case words joined by hyphens, e.g. day-of-travel)" >&2
  exit 2
fi

# Before anything is written: a typed-client break nobody recorded (contracts/typed-client-changes.yaml) would be
# released unrecorded, so it leaves the baseline as it was.
node_modules/.bin/tsx scripts/check-typed-clients.ts check

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
node_modules/.bin/tsx scripts/check-typed-clients.ts release "$name"
