#!/usr/bin/env bash
# Runs promtool (Prometheus's config and rule checker) from .tools/prometheus, installing it there on first use.
# Usage: bash scripts/promtool.sh [promtool arguments...]   (e.g. bash scripts/promtool.sh check rules x.yml)
#
# The pinned source is Debian's `prometheus` package: `apt-get download` fetches the .deb and `dpkg-deb -x` unpacks
# it into .tools/prometheus, so nothing is installed system-wide. Where apt cannot serve that version (a machine
# without Debian's package lists, or a point release that replaced it), promtool of the same upstream release is
# built from its Go module instead (about 6 minutes on two cores with an empty module cache, once).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

upstream_version="2.42.0"
debian_version="${upstream_version}+ds-5+deb12u1"
# Prometheus 2.42.0 as a Go module. Its go.mod has replace and exclude directives, which `go install pkg@version`
# refuses, so the fallback builds inside the downloaded module, where they apply.
go_module="github.com/prometheus/prometheus@v0.42.0"

install_dir="$root/.tools/prometheus"
binary="$install_dir/usr/bin/promtool"
# The stamp records which pin the binary came from, so a changed pin is never served by an old binary.
stamp="$install_dir/.version"
pin="debian:$debian_version go:$go_module"

say() { echo "promtool: $*" >&2; }

download_debian_package() {
  local download_dir="$1"
  # apt drops to the _apt account while downloading; it must be able to write the folder.
  chmod 0777 "$download_dir"
  (cd "$download_dir" && apt-get download -qq "prometheus=$debian_version" >/dev/null 2>&1)
}

install_from_debian() {
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || return 1
  local download_dir
  download_dir="$(mktemp -d)"
  trap 'rm -rf "$download_dir"' RETURN
  if ! download_debian_package "$download_dir"; then
    # A fresh machine may have no package lists yet; refreshing them needs root.
    [[ "$(id -u)" -eq 0 ]] || return 1
    say "refreshing apt package lists"
    apt-get update -qq >/dev/null || return 1
    download_debian_package "$download_dir" || return 1
  fi
  local package
  package="$(ls "$download_dir"/prometheus_*.deb)"
  rm -rf "$install_dir"
  mkdir -p "$install_dir"
  dpkg-deb -x "$package" "$install_dir"
}

install_from_go() {
  if ! command -v go >/dev/null; then
    say "neither apt (Debian's prometheus $debian_version) nor Go can install promtool here"
    return 1
  fi
  say "building promtool from $go_module (once; about 6 minutes)"
  local module_dir
  module_dir="$(go mod download -json "$go_module" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$module_dir" ]] || return 1
  rm -rf "$install_dir"
  mkdir -p "$install_dir/usr/bin"
  (cd "$module_dir" && go build -o "$install_dir/usr/bin/promtool" \
    -ldflags "-X github.com/prometheus/common/version.Version=$upstream_version" ./cmd/promtool)
}

if [[ ! -x "$binary" || "$(cat "$stamp" 2>/dev/null)" != "$pin" ]]; then
  say "installing Debian's prometheus $debian_version into .tools/prometheus"
  if ! install_from_debian; then
    say "apt could not provide prometheus=$debian_version; building it with Go instead"
    install_from_go
  fi
  echo "$pin" >"$stamp"
fi
exec "$binary" "$@"
