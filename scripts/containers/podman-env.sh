# Sourced by the container tests: installs podman when missing and points it at configuration and storage under
# .tools/containers (or CONTAINERS_CACHE_DIR), so base images and build layers survive between runs.
set -euo pipefail

# CI sets CONTAINERS_CACHE_DIR to a folder of the machine's, so a fresh clone on a warm machine reuses its images.
export CONTAINERS_CACHE_DIR="${CONTAINERS_CACHE_DIR:-$PWD/.tools/containers}"
containers_root="$CONTAINERS_CACHE_DIR"
mkdir -p "$containers_root/graph" "$containers_root/run"

podman_packages=(podman runc crun conmon netavark aardvark-dns containernetworking-plugins fuse-overlayfs
  slirp4netns uidmap catatonit iptables debootstrap)
if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null || ! command -v runc >/dev/null; then
  echo "Installing podman and debootstrap with apt"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${podman_packages[@]}" >/dev/null
fi

# runc, not crun: crun 1.8 refuses this host's hybrid cgroups. The default ulimits cannot be raised here, so the
# containers ask for limits within what the host allows.
cat >"$containers_root/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF

cat >"$containers_root/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$containers_root/graph"
runroot = "$containers_root/run"
CONF

export CONTAINERS_CONF="$containers_root/containers.conf"
export CONTAINERS_STORAGE_CONF="$containers_root/storage.conf"

# The Node bases the service image builds on (scripts/containers/base-images.sh): named by the project's pinned Node,
# so a new pin builds new ones.
node_version=$(node scripts/node-runtime.cjs --version)
export NODE_BASE_IMAGE="localhost/bus-booking/node:$node_version-debian"
export NODE_BUILD_BASE_IMAGE="localhost/bus-booking/node-npm:$node_version-debian"
