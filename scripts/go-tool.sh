#!/usr/bin/env bash
# Runs a pinned Go command-line tool from .tools/bin, installing it there with `go install` on first use.
# Usage: bash scripts/go-tool.sh <tool> [arguments...]   (e.g. bash scripts/go-tool.sh grpcurl list)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

# One pinned module version per tool: the binary is reinstalled whenever the pin changes.
declare -A modules=(
  [grpcurl]="github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.3"
  [k6]="go.k6.io/k6@v1.8.1"
  [helm]="helm.sh/helm/v3/cmd/helm@v3.22.0"
  [kubeconform]="github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0"
)

tool="${1:-}"
if [[ -z "$tool" || -z "${modules[$tool]:-}" ]]; then
  echo "usage: bash scripts/go-tool.sh <tool> [arguments...]; known tools: ${!modules[*]}" >&2
  exit 2
fi
shift
module="${modules[$tool]}"
bin_dir="$root/.tools/bin"
binary="$bin_dir/$tool"
# The stamp records which pin the binary was built from, so a changed pin is never served by an old binary.
stamp="$bin_dir/.$tool.version"

if [[ ! -x "$binary" || "$(cat "$stamp" 2>/dev/null)" != "$module" ]]; then
  if ! command -v go >/dev/null; then
    echo "$tool: Go is needed to install $module (https://go.dev/dl/)" >&2
    exit 1
  fi
  echo "$tool: installing $module into .tools/bin" >&2
  mkdir -p "$bin_dir"
  GOBIN="$bin_dir" go install "$module"
  echo "$module" >"$stamp"
fi
exec "$binary" "$@"
