#!/usr/bin/env bash
# Records the current proto contracts as the baseline that `npm run contracts:check` guards against breaking changes.
# Run it when a contract version is released (or a breaking change was agreed), then commit the image.
set -euo pipefail
cd "$(dirname "$0")/.."

baseline=proto/baseline/contracts.binpb
mkdir -p "$(dirname "$baseline")"
# Source info only carries comments and line numbers, which the breaking check does not need from the baseline.
node_modules/.bin/buf build --exclude-source-info -o "$baseline"
echo "wrote $baseline"
