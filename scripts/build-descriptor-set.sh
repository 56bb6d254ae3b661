#!/usr/bin/env bash
# Builds the file descriptor set of the proto contracts: every file of proto/com/example (the internal services' too),
# the google.rpc error details the errors carry, grpc.health.v1, and every file these import, with comments. gRPC
# server reflection serves it (grpcurl describe shows the comments); src/contracts reads the options from it.
# Usage: bash scripts/build-descriptor-set.sh [output]   (npm run generate writes the default, which is committed)
set -euo pipefail
cd "$(dirname "$0")/.."

output="${1:-proto/reflection/descriptor-set.binpb}"
mkdir -p "$(dirname "$output")"
node_modules/.bin/buf build --as-file-descriptor-set -o "$output" \
  --path proto/com/example \
  --path proto/google/rpc/error_details.proto \
  --path proto/google/rpc/status.proto \
  --path proto/grpc/health/v1/health.proto
