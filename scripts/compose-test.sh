#!/usr/bin/env bash
# `npm run compose:test`: runs docker-compose.yml for real with podman-compose (pinned, into .tools/python), the
# images it names replaced by local builds where no registry is reachable (deploy/compose/podman-override.yml),
# then drives it from scripts/containers/compose-test.ts. Images are cached under .tools/containers.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
podman_compose_version=1.6.0

source scripts/containers/podman-env.sh
if [[ "$(PYTHONPATH=.tools/python python3 -m podman_compose version 2>/dev/null | head -n 1)" != *" $podman_compose_version" ]]; then
  echo "compose:test: installing podman-compose $podman_compose_version into .tools/python"
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target .tools/python \
    "podman-compose==$podman_compose_version"
fi
bash scripts/containers/base-images.sh
bash scripts/containers/service-image.sh
# The demo data is not in the image: a one-off container seeds it with the host's build of dev/ mounted.
npm run --silent build:dev
bash scripts/containers/stand-in-images.sh
if [[ ! -f deploy/certs/temporal/ca.crt ]]; then npm run --silent certs:compose; fi

npx tsx scripts/containers/compose-test.ts
echo "compose:test: took $(($(date +%s) - started)) s in all"
