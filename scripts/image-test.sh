#!/usr/bin/env bash
# `npm run image:test`: builds the service image with podman on a base made from Debian packages and the project's
# pinned Node (no container registry needed), then runs it for real (scripts/containers/image-test.ts). Base images
# and build layers are cached under .tools/containers.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

source scripts/containers/podman-env.sh
bash scripts/containers/base-images.sh

bash scripts/containers/service-image.sh
# The demo data is not in the image: a one-off container seeds it with the host's build of dev/ mounted.
npm run --silent build:dev

npx tsx scripts/containers/image-test.ts
echo "image:test: took $(($(date +%s) - started)) s in all"
