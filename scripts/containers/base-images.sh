# Builds the Node 20 base images from Debian packages (no container registry is needed): a trixie minbase with
# nodejs for the runtime stage, and the same plus npm for the build stage. Skipped when the images exist.
set -euo pipefail

runtime_image=localhost/bus-booking/node:20-debian
build_image=localhost/bus-booking/node-npm:20-debian
debian_suite=trixie
# The mirror apt is configured with on this host.
debian_mirror=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
  || true) | sed -nE 's/^(URIs:|deb)[[:space:]]+(\[[^]]*\][[:space:]]+)?(https?:[^ ]+\/debian)\/?([[:space:]].*)?$/\3/p' | head -n 1)
debian_mirror=${debian_mirror:-http://deb.debian.org/debian}

if ! podman image exists "$runtime_image"; then
  started=$(date +%s)
  rootfs=$(mktemp -d "$CONTAINERS_CACHE_DIR/rootfs.XXXXXX")
  trap 'rm -rf "$rootfs" "$rootfs.log"' EXIT
  echo "Building $runtime_image: debootstrap $debian_suite from $debian_mirror"
  debootstrap --variant=minbase "$debian_suite" "$rootfs" "$debian_mirror" >"$rootfs.log" 2>&1 \
    || { tail -n 20 "$rootfs.log"; exit 1; }
  chroot "$rootfs" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends nodejs ca-certificates && apt-get clean && rm -rf /var/lib/apt/lists/*' \
    >>"$rootfs.log" 2>&1 || { tail -n 20 "$rootfs.log"; exit 1; }
  tar -C "$rootfs" --exclude=./proc --exclude=./sys --exclude=./dev -c . \
    | podman import --change 'CMD ["node"]' - "$runtime_image" >/dev/null
  rm -rf "$rootfs" "$rootfs.log"
  trap - EXIT
  echo "Built $runtime_image in $(($(date +%s) - started)) s"
fi

if ! podman image exists "$build_image"; then
  started=$(date +%s)
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  # The build stage fetches from the npm registry: it trusts the extra CAs this host trusts (a TLS-inspecting
  # egress proxy's, say), and only the build image gets them, never the runtime base.
  mkdir -p "$context/extra-ca"
  cp /usr/local/share/ca-certificates/*.crt "$context/extra-ca/" 2>/dev/null || true
  cat >"$context/Containerfile" <<'CONTAINERFILE'
ARG BASE
FROM ${BASE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null \
  && apt-get clean && rm -rf /var/lib/apt/lists/*
COPY extra-ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates >/dev/null 2>&1
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CONTAINERFILE
  podman build --network=host --quiet -t "$build_image" --build-arg "BASE=$runtime_image" "$context" >/dev/null
  rm -rf "$context"
  trap - EXIT
  echo "Built $build_image in $(($(date +%s) - started)) s"
fi
