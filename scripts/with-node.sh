#!/usr/bin/env bash
# Runs a command with the project's Node (scripts/node-runtime.cjs) first on PATH, so it and its children use it.
set -euo pipefail
node_bin=$(node "$(dirname "$0")/node-runtime.cjs")
export PATH="$node_bin:$PATH"
exec "$@"
