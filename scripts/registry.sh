#!/usr/bin/env bash
# Apicurio Registry, pinned, installed into .tools from Maven Central and run locally with in-memory storage.
#
# Usage: bash scripts/registry.sh install
#          prints two lines: the registry's folder (it holds quarkus-run.jar) and the JAVA_HOME that runs it.
#        bash scripts/registry.sh run -- COMMAND [ARGS...]
#          starts a registry on a free loopback port, runs COMMAND with SCHEMA_REGISTRY_URL and
#          LOCAL_SCHEMA_REGISTRY_URL set to it, stops the registry, and exits with COMMAND's status.
# Nothing is downloaded or unpacked again while the stamp matches the pin; a changed pin reinstalls.
# SCHEMA_REGISTRY_JAVA_HOME picks the Java (21 or newer) when several are installed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

version=3.3.3
artifact="io.apicurio:apicurio-registry-app:$version:tar.gz:all"
install_dir="$root/.tools/apicurio-registry"
stamp="$install_dir/.apicurio-registry.version"
# Maven's local repository lives in .tools too (shared with scripts/keycloak.sh), so the archive is downloaded once.
maven_repo="$root/.tools/m2"
archive="$maven_repo/io/apicurio/apicurio-registry-app/$version/apicurio-registry-app-$version-all.tar.gz"
# Bounded: a registry that is not ready by then is reported with its log, never waited on forever.
ready_timeout_seconds=180

source "$(dirname "${BASH_SOURCE[0]}")/lib/java.sh"

install() {
  if [[ -f "$install_dir/quarkus-run.jar" ]] &&
    [[ "$(cat "$stamp" 2>/dev/null)" == "$version" ]]; then
    return 0
  fi
  if [[ ! -f "$archive" ]]; then
    if ! command -v mvn >/dev/null; then
      echo "registry: Maven (mvn) is needed to download $artifact from Maven Central" >&2
      exit 1
    fi
    echo "registry: downloading $artifact (about 160 MB) into .tools/m2" >&2
    mkdir -p "$maven_repo"
    maven_log="$maven_repo/apicurio-registry-download.log"
    # -C: a download whose checksum does not match Maven Central's fails instead of being installed.
    if ! mvn -B -C dependency:get -Dartifact="$artifact" -Dtransitive=false -Dmaven.repo.local="$maven_repo" \
      >"$maven_log" 2>&1; then
      tail -n 30 "$maven_log" >&2
      echo "registry: Maven could not download $artifact (its output is above and in $maven_log)" >&2
      exit 1
    fi
  fi
  echo "registry: unpacking Apicurio Registry $version into .tools/apicurio-registry" >&2
  local scratch
  scratch="$(mktemp -d "$root/.tools/apicurio-registry-unpack.XXXXXX")"
  if ! tar -xzf "$archive" -C "$scratch"; then
    rm -rf "$scratch"
    echo "registry: could not unpack $archive; delete it to download it again" >&2
    exit 1
  fi
  rm -rf "$install_dir"
  mv "$scratch" "$install_dir"
  echo "$version" >"$stamp"
}

free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

run() {
  local java_home="$1"
  shift
  local http_port management_port log pid
  http_port="$(free_port)"
  management_port="$(free_port)"
  while [[ "$management_port" == "$http_port" ]]; do management_port="$(free_port)"; done
  mkdir -p "$root/.data"
  log="$root/.data/schema-registry.log"
  # In-memory H2 storage (the registry's default, stated so an inherited environment cannot change it): every start
  # is empty. Both listeners stay on loopback.
  (
    cd "$install_dir"
    exec env QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT="$http_port" \
      QUARKUS_MANAGEMENT_HOST=127.0.0.1 QUARKUS_MANAGEMENT_PORT="$management_port" \
      APICURIO_STORAGE_KIND=sql APICURIO_STORAGE_SQL_KIND=h2 "APICURIO_DATASOURCE_URL=jdbc:h2:mem:registry" \
      "$java_home/bin/java" -Xmx512m -jar quarkus-run.jar
  ) >"$log" 2>&1 &
  pid=$!
  # shellcheck disable=SC2064 # the pid is fixed now
  trap "kill $pid 2>/dev/null; wait $pid 2>/dev/null || true" EXIT

  local started waited
  started=$(date +%s)
  until curl -sf "http://127.0.0.1:$management_port/health/ready" >/dev/null 2>&1; do
    waited=$(($(date +%s) - started))
    if ! kill -0 "$pid" 2>/dev/null || ((waited >= ready_timeout_seconds)); then
      tail -n 40 "$log" >&2
      echo "registry: Apicurio Registry $version did not become ready in ${waited} s (its log is above and in $log)" >&2
      exit 1
    fi
    sleep 1
  done
  echo "registry: Apicurio Registry $version ready on http://127.0.0.1:$http_port in $(($(date +%s) - started)) s" >&2

  local status=0
  SCHEMA_REGISTRY_URL="http://127.0.0.1:$http_port" LOCAL_SCHEMA_REGISTRY_URL="http://127.0.0.1:$http_port" \
    "$@" || status=$?
  return "$status"
}

if ! java_home="$(find_java_home "${SCHEMA_REGISTRY_JAVA_HOME:-}")"; then
  echo "registry: Apicurio Registry $version needs Java 21 or newer (Java 25 is tested); none was found." >&2
  echo "registry: install a Java 25 JDK and set SCHEMA_REGISTRY_JAVA_HOME or JAVA_HOME to it" >&2
  echo "registry: (for example SCHEMA_REGISTRY_JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64)." >&2
  exit 1
fi

case "${1:-}" in
  install)
    install
    echo "$install_dir"
    echo "$java_home"
    ;;
  run)
    shift
    [[ "${1:-}" == "--" ]] && shift
    if [[ $# -eq 0 ]]; then
      echo "usage: bash scripts/registry.sh run -- COMMAND [ARGS...]" >&2
      exit 2
    fi
    install
    run "$java_home" "$@"
    ;;
  *)
    echo "usage: bash scripts/registry.sh install | run -- COMMAND [ARGS...]" >&2
    exit 2
    ;;
esac
