# Builds the service image from the repository's Dockerfile on the Debian-made Node 20 bases (layers cached).
set -euo pipefail
service_image=localhost/bus-booking/service:test
build_started=$(date +%s)
podman build --network=host --quiet \
  --build-arg NODE_IMAGE=localhost/bus-booking/node:20-debian \
  --build-arg NODE_BUILD_IMAGE=localhost/bus-booking/node-npm:20-debian \
  -t "$service_image" . >/dev/null
echo "built $service_image in $(($(date +%s) - build_started)) s"
