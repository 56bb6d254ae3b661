# Builds the service image from the repository's Dockerfile on the Debian-made Node bases (layers cached).
set -euo pipefail
service_image=localhost/bus-booking/service:test
build_started=$(date +%s)
podman build --network=host --quiet \
  --build-arg "NODE_IMAGE=${NODE_BASE_IMAGE:?source scripts/containers/podman-env.sh first}" \
  --build-arg "NODE_BUILD_IMAGE=${NODE_BUILD_BASE_IMAGE:?source scripts/containers/podman-env.sh first}" \
  -t "$service_image" . >/dev/null
echo "built $service_image in $(($(date +%s) - build_started)) s"
