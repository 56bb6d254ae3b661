#!/usr/bin/env bash
# Installs the real Temporal server and its SQL schema tool (pinned) into .tools, building them with `go install`.
#
# Usage: bash scripts/temporal-server.sh
# Output contract: stdout is exactly one line, the absolute bin folder, which then holds
#   temporal-server      the server (`temporal-server --config-file F start --service frontend|history|...`)
#   temporal-sql-tool    the schema tool (`temporal-sql-tool --plugin postgres12 ... setup-schema | update-schema`)
# and the module's schema and config templates are copied beside it, in <bin folder>/../temporal-server/:
#   schema/postgresql/v12/{temporal,visibility}/versioned   what deploy/temporal/setup-schema.sh applies
#   config/development-postgres12.yaml                      the template the cluster stack's config is adapted from
# Progress goes to stderr. Nothing is rebuilt while the stamp matches the pin; a changed pin rebuilds everything.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

module=go.temporal.io/server
version=v1.32.2
# The server's go.mod asks for a newer Go than many machines have; Go fetches this toolchain through the proxy.
toolchain=go1.26.10
pin="$module@$version $toolchain"

bin_dir="$root/.tools/bin"
support_dir="$root/.tools/temporal-server"
server="$bin_dir/temporal-server"
sql_tool="$bin_dir/temporal-sql-tool"
# The stamp records what the binaries and files were made from, so a changed pin is never served by old ones.
stamp="$bin_dir/.temporal-server.version"

installed() {
  [[ -x "$server" && -x "$sql_tool" && -d "$support_dir/schema" && -d "$support_dir/config" ]] &&
    [[ "$(cat "$stamp" 2>/dev/null)" == "$pin" ]]
}

if ! installed; then
  if ! command -v go >/dev/null; then
    echo "temporal-server: Go is needed to build $module@$version (https://go.dev/dl/)" >&2
    exit 1
  fi
  echo "temporal-server: building $module@$version with $toolchain into .tools/bin (minutes on a cold cache)" >&2
  mkdir -p "$bin_dir"
  scratch="$(mktemp -d "$root/.tools/temporal-server-build.XXXXXX")"
  trap 'rm -rf "$scratch"' EXIT
  # `go install` names the binaries after their package folders (server, sql): install aside, then rename.
  GOTOOLCHAIN="$toolchain" GOBIN="$scratch/bin" go install \
    "$module/cmd/server@$version" "$module/cmd/tools/sql@$version" >&2
  module_dir="$(GOTOOLCHAIN="$toolchain" go mod download -json "$module@$version" |
    node -e 'let s="";process.stdin.on("data",(c)=>(s+=c)).on("end",()=>process.stdout.write(JSON.parse(s).Dir))')"
  if [[ ! -d "$module_dir/schema" || ! -d "$module_dir/config" ]]; then
    echo "temporal-server: $module@$version has no schema/ or config/ in $module_dir" >&2
    exit 1
  fi
  # A copy, not a link: the module cache is read-only and `go clean -modcache` may empty it.
  mkdir -p "$scratch/support"
  cp -R "$module_dir/schema" "$module_dir/config" "$scratch/support/"
  chmod -R u+w "$scratch/support"
  rm -rf "$support_dir"
  mv "$scratch/support" "$support_dir"
  mv -f "$scratch/bin/server" "$server"
  mv -f "$scratch/bin/sql" "$sql_tool"
  echo "$pin" >"$stamp"
  echo "temporal-server: $("$server" --version)" >&2
fi
echo "$bin_dir"
