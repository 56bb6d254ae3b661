#!/usr/bin/env bash
# `npm run image:test`: builds the service image with podman on a Node 20 base made from Debian packages (no
# container registry needed), then runs it for real (scripts/containers/image-test.ts). Base images and build
# layers are cached under .tools/containers.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

source scripts/containers/podman-env.sh
bash scripts/containers/base-images.sh

image=localhost/bus-booking/service:test
build_started=$(date +%s)
podman build --network=host --quiet \
  --build-arg NODE_IMAGE=localhost/bus-booking/node:20-debian \
  --build-arg NODE_BUILD_IMAGE=localhost/bus-booking/node-npm:20-debian \
  -t "$image" . >/dev/null
echo "image:test: built $image in $(($(date +%s) - build_started)) s"

BOOKING_IMAGE="$image" npx tsx scripts/containers/image-test.ts
echo "image:test: took $(($(date +%s) - started)) s in all"
