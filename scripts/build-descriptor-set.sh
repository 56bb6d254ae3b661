#!/usr/bin/env bash
# Builds the file descriptor set gRPC server reflection serves: the served services, the google.rpc error details
# their errors carry, and every file these import, with comments (grpcurl describe shows them).
# Usage: bash scripts/build-descriptor-set.sh [output]   (npm run generate writes the default, which is committed)
set -euo pipefail
cd "$(dirname "$0")/.."

output="${1:-proto/reflection/descriptor-set.binpb}"
mkdir -p "$(dirname "$output")"
node_modules/.bin/buf build --as-file-descriptor-set -o "$output" \
  --path proto/com/example/bookings/v1/booking_service.proto \
  --path proto/com/example/common/v1/error_reason.proto \
  --path proto/google/rpc/error_details.proto \
  --path proto/google/rpc/status.proto \
  --path proto/grpc/health/v1/health.proto
