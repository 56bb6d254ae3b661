#!/usr/bin/env bash
# Contract gate: the AsyncAPI document linted, buf lint and format, no breaking change against the committed baseline
# (buf breaking for the protos' fine-grained rules; a schema registry for the protos, the OpenAPI document and the
# AsyncAPI document with each of its message payloads; typed clients of every release, each break recorded for its
# release), src/generated, the contracts' descriptor set and the TypeScript client's types up to date.
#
# Usage: bash scripts/check-contracts.sh [--without-registry]
# The registry check uses SCHEMA_REGISTRY_URL when it is set (a shared registry: it checks against the latest
# versions there and stores nothing); otherwise it starts a local Apicurio Registry (scripts/registry.sh), registers
# contracts/released/ in it and checks against that. --without-registry leaves it out (npm test: the registry costs
# a JVM start; npm run contracts:registry runs it in CI).
set -euo pipefail
cd "$(dirname "$0")/.."

with_registry=true
case "${1:-}" in
  '') ;;
  --without-registry) with_registry=false ;;
  *)
    echo "usage: bash scripts/check-contracts.sh [--without-registry]" >&2
    exit 2
    ;;
esac

buf=node_modules/.bin/buf
baseline=proto/baseline/contracts.binpb

for released in "$baseline" contracts/released/openapi.yaml contracts/released/asyncapi.yaml contracts/released/proto contracts/releases; do
  if [[ ! -e "$released" ]]; then
    echo "contracts: $released is missing: run npm run contracts:release and commit it" >&2
    exit 1
  fi
done

echo "contracts: AsyncAPI lint (spectral:asyncapi, the AsyncAPI 3.0 schema; a warning fails too)"
npm run --silent asyncapi:lint

echo "contracts: buf lint"
"$buf" lint

echo "contracts: buf format"
"$buf" format --diff --exit-code

echo "contracts: buf breaking against $baseline"
# Both breaking-change checks report before either fails the gate: each names what the other may not.
breaking_status=0
"$buf" breaking --against "$baseline" || breaking_status=$?

if [[ "$with_registry" == true ]]; then
  if [[ -n "${SCHEMA_REGISTRY_URL:-}" ]]; then
    echo "contracts: schema registry at $SCHEMA_REGISTRY_URL (dryRun against its latest versions)"
    node_modules/.bin/tsx scripts/registry-check.ts check || breaking_status=$?
  else
    echo "contracts: schema registry (a local Apicurio Registry holding contracts/released/)"
    bash scripts/registry.sh run -- node_modules/.bin/tsx scripts/registry-check.ts check --seed || breaking_status=$?
  fi
else
  echo "contracts: schema registry check left out (npm run contracts:registry runs it)"
fi

echo "contracts: typed clients of every release (openapi-typescript and openapi-fetch, one tsc program)"
node_modules/.bin/tsx scripts/check-typed-clients.ts check || breaking_status=$?

if [[ "$breaking_status" -ne 0 ]]; then
  echo "contracts: the breaking-change checks failed (reasons above)" >&2
  exit 1
fi

echo "contracts: generated code freshness"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# --output prefixes the template's out directory, so the fresh copy lands in $scratch/src/generated.
"$buf" generate --output "$scratch"
if ! diff -r "$scratch/src/generated" src/generated >"$scratch/generated.diff"; then
  head -n 40 "$scratch/generated.diff" >&2
  echo "src/generated is stale: run npm run generate" >&2
  exit 1
fi

echo "contracts: descriptor set freshness (served by reflection, read by src/contracts)"
descriptor_set=proto/reflection/descriptor-set.binpb
bash scripts/build-descriptor-set.sh "$scratch/descriptor-set.binpb"
if ! cmp -s "$scratch/descriptor-set.binpb" "$descriptor_set"; then
  echo "$descriptor_set is stale: run npm run generate" >&2
  exit 1
fi

echo "contracts: TypeScript client types freshness (clients/typescript, from openapi/openapi.yaml)"
client_types=clients/typescript/src/generated/schema.ts
node_modules/.bin/openapi-typescript openapi/openapi.yaml --output "$scratch/schema.ts" >/dev/null
if ! diff "$scratch/schema.ts" "$client_types" >"$scratch/client-types.diff"; then
  head -n 40 "$scratch/client-types.diff" >&2
  echo "$client_types is stale: run npm run generate" >&2
  exit 1
fi

echo "contracts: OK"
