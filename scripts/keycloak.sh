#!/usr/bin/env bash
# Installs the pinned Keycloak server distribution from Maven Central into .tools and prints its folder.
#
# Usage: bash scripts/keycloak.sh
# Output contract: stdout is exactly one line, the absolute Keycloak folder (it holds bin/kc.sh), then a
#   second line, the JAVA_HOME that runs it (Java 21 or newer). Progress goes to stderr.
# Nothing is downloaded or unpacked again while the stamp matches the pin; a changed pin reinstalls.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

version=26.4.7
artifact="org.keycloak:keycloak-quarkus-dist:$version:zip"
install_dir="$root/.tools/keycloak"
stamp="$install_dir/.keycloak.version"
# Maven's local repository lives in .tools too, so the archive is downloaded once per machine.
maven_repo="$root/.tools/m2"
archive="$maven_repo/org/keycloak/keycloak-quarkus-dist/$version/keycloak-quarkus-dist-$version.zip"

source "$(dirname "${BASH_SOURCE[0]}")/lib/java.sh"

if ! java_home="$(find_java_home "${KEYCLOAK_JAVA_HOME:-}")"; then
  echo "keycloak: Keycloak $version needs Java 21 or newer (Java 25 is tested); none was found." >&2
  echo "keycloak: install a Java 25 JDK and set KEYCLOAK_JAVA_HOME or JAVA_HOME to it" >&2
  echo "keycloak: (for example JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64)." >&2
  exit 1
fi

installed() {
  [[ -x "$install_dir/bin/kc.sh" && "$(cat "$stamp" 2>/dev/null)" == "$version" ]]
}

if ! installed; then
  if [[ ! -f "$archive" ]]; then
    if ! command -v mvn >/dev/null; then
      echo "keycloak: Maven (mvn) is needed to download $artifact from Maven Central" >&2
      exit 1
    fi
    echo "keycloak: downloading $artifact (about 160 MB) into .tools/m2" >&2
    mkdir -p "$maven_repo"
    maven_log="$maven_repo/keycloak-download.log"
    # -C: a download whose checksum does not match Maven Central's fails instead of being installed. Maven's
    # output is kept for a failure only: on success it is noise.
    if ! mvn -B -C dependency:get -Dartifact="$artifact" -Dtransitive=false -Dmaven.repo.local="$maven_repo" \
      >"$maven_log" 2>&1; then
      tail -n 30 "$maven_log" >&2
      echo "keycloak: Maven could not download $artifact (its output is above and in $maven_log)" >&2
      exit 1
    fi
  fi
  echo "keycloak: unpacking Keycloak $version into .tools/keycloak" >&2
  mkdir -p "$root/.tools"
  scratch="$(mktemp -d "$root/.tools/keycloak-unpack.XXXXXX")"
  trap 'rm -rf "$scratch"' EXIT
  unzip -q "$archive" -d "$scratch"
  rm -rf "$install_dir"
  mv "$scratch/keycloak-$version" "$install_dir"
  echo "$version" >"$stamp"
fi
echo "$install_dir"
echo "$java_home"
