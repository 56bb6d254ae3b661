#!/usr/bin/env bash
# Installs pdftoppm (poppler-utils) and zbarimg (zbar-tools) into .tools/apt on first use, and prints the environment
# that runs them: `eval "$(bash scripts/ticket-tools.sh)"` puts them on PATH with their libraries.
#
# The pinned sources are Debian 12's packages and the libraries they need beyond a base system: `apt-get download`
# fetches each .deb and `dpkg-deb -x` unpacks it into .tools/apt, so nothing is installed system-wide. zbarimg reads
# images through ImageMagick, whose coder modules and configuration are found through MAGICK_* variables.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
  poppler-utils=22.12.0-2+deb12u3
  libpoppler126=22.12.0-2+deb12u3
  zbar-tools=0.23.92-7+deb12u1
  libzbar0=0.23.92-7+deb12u1
  libmagickcore-6.q16-6=8:6.9.11.60+dfsg-1.6+deb12u15
  libmagickwand-6.q16-6=8:6.9.11.60+dfsg-1.6+deb12u15
  imagemagick-6-common=8:6.9.11.60+dfsg-1.6+deb12u15
  libfftw3-double3=3.3.10-1
  liblqr-1-0=0.4.2-2.1
  libltdl7=2.4.7-7~deb12u1
  libv4l-0=1.22.1-5+b2
  libv4lconvert0=1.22.1-5+b2
  libwebpdemux2=1.2.4-0.2+deb12u1
  libwebpmux3=1.2.4-0.2+deb12u1
)

install_dir="$root/.tools/apt"
# The stamp records which pins the files came from, so a changed pin is never served by old files.
stamp="$install_dir/.versions"
pins="${packages[*]}"

say() { echo "ticket-tools: $*" >&2; }

download_packages() {
  local download_dir="$1"
  # apt drops to the _apt account while downloading; it must be able to write the folder.
  chmod 0777 "$download_dir"
  (cd "$download_dir" && apt-get download -qq "${packages[@]}" >/dev/null 2>&1)
}

install_packages() {
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || {
    say "apt-get and dpkg-deb are needed to install poppler-utils and zbar-tools"
    return 1
  }
  local download_dir
  download_dir="$(mktemp -d)"
  trap 'rm -rf "$download_dir"' RETURN
  if ! download_packages "$download_dir"; then
    # A fresh machine may have no package lists yet; refreshing them needs root.
    [[ "$(id -u)" -eq 0 ]] || {
      say "apt cannot download ${packages[*]}"
      return 1
    }
    say "refreshing apt package lists"
    apt-get update -qq >/dev/null
    download_packages "$download_dir" || {
      say "apt cannot download ${packages[*]}"
      return 1
    }
  fi
  rm -rf "$install_dir"
  mkdir -p "$install_dir"
  local package
  for package in "$download_dir"/*.deb; do dpkg-deb -x "$package" "$install_dir"; done
  echo "$pins" >"$stamp"
}

if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$pins" ]]; then
  say "installing ${#packages[@]} Debian packages into .tools/apt (once)"
  install_packages
fi

libraries="$install_dir/usr/lib/x86_64-linux-gnu"
magick_modules="$(ls -d "$libraries"/ImageMagick-6.*/modules-Q16 | head -n 1)"
magick_config="$(ls -d "$install_dir"/etc/ImageMagick-6 | head -n 1)"
cat <<ENV
export PATH="$install_dir/usr/bin:\$PATH"
export LD_LIBRARY_PATH="$libraries\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export MAGICK_CODER_MODULE_PATH="$magick_modules/coders"
export MAGICK_CODER_FILTER_PATH="$magick_modules/filters"
export MAGICK_CONFIGURE_PATH="$magick_config"
ENV
