#!/usr/bin/env bash
# `npm run test:payments-walk`: `PAYMENT_GATEWAY=stripe npm start`'s stack on loopback ports of its own, then
# docs/payments.md's walk by hand against it (npm run payments:walk), so the page a person follows stays true.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

export HTTP_PORT="${WALK_HTTP_PORT:-48080}" GRPC_PORT="${WALK_GRPC_PORT:-45051}"
export METRICS_PORT="${WALK_METRICS_PORT:-49464}" WORKER_METRICS_PORT="${WALK_WORKER_METRICS_PORT:-49465}"
export TEMPORAL_PORT="${WALK_TEMPORAL_PORT:-47233}" TEMPORAL_UI_PORT="${WALK_TEMPORAL_UI_PORT:-48233}"
export EMBEDDED_POSTGRES_PORT="${WALK_POSTGRES_PORT:-45432}" LOCALSTRIPE_PORT="${WALK_LOCALSTRIPE_PORT:-48420}"
export HTTP_HOST=127.0.0.1 GRPC_HOST=127.0.0.1 PAYMENT_GATEWAY=stripe
unset STRIPE_SECRET_KEY STRIPE_API_URL
# A stack of its own, from scratch each time: localstripe starts empty, so no booking may predate it.
stack_data="$root/.data/payments-walk-stack"
rm -rf "$stack_data"

# shellcheck source=scripts/lib/embedded-stack.sh
source scripts/lib/embedded-stack.sh
trap stop_embedded_stack EXIT
start_embedded_stack "$stack_data" payments-walk
API="$stack_url" STRIPE="http://127.0.0.1:$LOCALSTRIPE_PORT" bash scripts/payments-walk.sh
