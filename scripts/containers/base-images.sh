# Builds the Node base images without a container registry: a Debian trixie minbase with the project's pinned Node
# (the npm binary package scripts/node-runtime.cjs unpacks into .tools/) for the runtime stage, and the same plus npm
# (from the npm registry too) for the build stage. Skipped when the images exist; their tags name the Node release.
set -euo pipefail

runtime_image=${NODE_BASE_IMAGE:?source scripts/containers/podman-env.sh first}
build_image=${NODE_BUILD_BASE_IMAGE:?source scripts/containers/podman-env.sh first}
# The npm the dev machines run; Debian's npm package would bring Debian's own, older nodejs along.
npm_version=11.19.1
debian_suite=trixie
# The mirror apt is configured with on this host.
debian_mirror=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
  || true) | sed -nE 's/^(URIs:|deb)[[:space:]]+(\[[^]]*\][[:space:]]+)?(https?:[^ ]+\/debian)\/?([[:space:]].*)?$/\3/p' | head -n 1)
debian_mirror=${debian_mirror:-http://deb.debian.org/debian}

if ! podman image exists "$runtime_image"; then
  started=$(date +%s)
  node_version=$(node scripts/node-runtime.cjs --version)
  node_home=$(dirname "$(node scripts/node-runtime.cjs --exact)")
  rootfs=$(mktemp -d "$CONTAINERS_CACHE_DIR/rootfs.XXXXXX")
  trap 'rm -rf "$rootfs" "$rootfs.log"' EXIT
  echo "Building $runtime_image: debootstrap $debian_suite from $debian_mirror, Node $node_version from .tools/"
  debootstrap --variant=minbase "$debian_suite" "$rootfs" "$debian_mirror" >"$rootfs.log" 2>&1 \
    || { tail -n 20 "$rootfs.log"; exit 1; }
  chroot "$rootfs" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends ca-certificates && apt-get clean && rm -rf /var/lib/apt/lists/*' \
    >>"$rootfs.log" 2>&1 || { tail -n 20 "$rootfs.log"; exit 1; }
  # Where the official Node images keep it: /usr/local/bin is on every container's default PATH.
  install -m 0755 "$node_home/bin/node" "$rootfs/usr/local/bin/node"
  install -D -m 0644 "$node_home/LICENSE" "$rootfs/usr/local/share/doc/node/LICENSE"
  in_base=$(chroot "$rootfs" /usr/local/bin/node --version)
  [[ "$in_base" == "v$node_version" ]] || { echo "the base's node says $in_base, not v$node_version" >&2; exit 1; }
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
  # npm is JavaScript with its dependencies bundled: unpacked where the official images keep it, it runs on the
  # base's node as it is.
  npm pack "npm@$npm_version" --pack-destination "$context" --silent >/dev/null
  mkdir -p "$context/npm"
  tar -xzf "$context/npm-$npm_version.tgz" -C "$context/npm" --strip-components=1
  # The build stage fetches from the npm registry: it trusts the extra CAs this host trusts (a TLS-inspecting
  # egress proxy's, say), and only the build image gets them, never the runtime base.
  mkdir -p "$context/extra-ca"
  cp /usr/local/share/ca-certificates/*.crt "$context/extra-ca/" 2>/dev/null || true
  cat >"$context/Containerfile" <<'CONTAINERFILE'
ARG BASE
FROM ${BASE}
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && npm --version >/dev/null
COPY extra-ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates >/dev/null 2>&1
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CONTAINERFILE
  podman build --network=host --quiet -t "$build_image" --build-arg "BASE=$runtime_image" "$context" >/dev/null
  rm -rf "$context"
  trap - EXIT
  echo "Built $build_image in $(($(date +%s) - started)) s"
fi
