# Builds the images docker-compose.yml names but this machine cannot pull: PostgreSQL, nginx and Prometheus from
# Debian's packages, Temporal (server and admin tools) from scripts/temporal-server.sh's build. Skips built ones.
set -euo pipefail
base=${NODE_BASE_IMAGE:?source scripts/containers/podman-env.sh first}
context_root=deploy/compose/podman

# Rebuilt when the files they are made from change: the image carries their digest as a label.
context_digest() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

build_stand_in() {
  local image=$1 context=$2 digest started
  digest=$(context_digest "$context")
  if [[ "$(podman image inspect --format '{{index .Labels "bus-booking.context"}}' "$image" 2>/dev/null)" == "$digest" ]]; then
    return
  fi
  started=$(date +%s)
  podman build --network=host --quiet --build-arg "BASE=$base" --label "bus-booking.context=$digest" -t "$image" \
    "$context" >/dev/null
  echo "built $image in $(($(date +%s) - started)) s"
}

build_stand_in localhost/bus-booking/postgresql:17-debian "$context_root/postgresql"
build_stand_in localhost/bus-booking/nginx:debian "$context_root/nginx"
build_stand_in localhost/bus-booking/prometheus:debian "$context_root/prometheus"

temporal_image=localhost/bus-booking/temporal:1.32.2
temporal_digest=$(context_digest "$context_root/temporal")
if [[ "$(podman image inspect --format '{{index .Labels "bus-booking.sources"}}' "$temporal_image" 2>/dev/null)" != "$temporal_digest" ]]; then
  bin_dir=$(bash scripts/temporal-server.sh)
  temporal_cli=$(node scripts/temporal-cli.cjs)
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  cp "$context_root/temporal/"* "$context/"
  mkdir -p "$context/bin"
  cp "$bin_dir/temporal-server" "$bin_dir/temporal-sql-tool" "$temporal_cli" "$context/bin/"
  cp -r "$bin_dir/../temporal-server/schema" "$context/schema"
  started=$(date +%s)
  podman build --network=host --quiet --build-arg "BASE=$base" --label "bus-booking.sources=$temporal_digest" \
    -t "$temporal_image" "$context" >/dev/null
  echo "built $temporal_image in $(($(date +%s) - started)) s"
fi
