#!/usr/bin/env bash
# Contract gate: buf lint and format, no breaking change against the committed baseline, src/generated, the
# contracts' descriptor set and the TypeScript client's types up to date.
set -euo pipefail
cd "$(dirname "$0")/.."

buf=node_modules/.bin/buf
baseline=proto/baseline/contracts.binpb

if [[ ! -f "$baseline" ]]; then
  echo "contracts: $baseline is missing: run npm run contracts:baseline and commit it" >&2
  exit 1
fi

echo "contracts: buf lint"
"$buf" lint

echo "contracts: buf format"
"$buf" format --diff --exit-code

echo "contracts: buf breaking against $baseline"
"$buf" breaking --against "$baseline"

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
