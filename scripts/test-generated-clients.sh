#!/usr/bin/env bash
# `npm run test:clients`: generates Python, Go and grpcio clients from the contracts and runs create -> pay -> cancel with each against the embedded stack.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# Pins: each tool is reinstalled into .tools/ only when its pin changes.
python_client_pin='openapi-python-client==0.29.1'
grpcio_tools_pin='grpcio-tools==1.85.1'
oapi_codegen_module='github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2'
oapi_codegen_runtime='github.com/oapi-codegen/runtime@v1.9.0'

venv="$root/.tools/venv"
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.pins" 2>/dev/null)" != "$python_client_pin $grpcio_tools_pin" ]]; then
  echo "clients: installing $python_client_pin and $grpcio_tools_pin into .tools/venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$python_client_pin" "$grpcio_tools_pin"
  echo "$python_client_pin $grpcio_tools_pin" >"$venv/.pins"
fi
oapi_codegen="$root/.tools/bin/oapi-codegen"
if [[ ! -x "$oapi_codegen" || "$(cat "$root/.tools/bin/.oapi-codegen.version" 2>/dev/null)" != "$oapi_codegen_module" ]]; then
  echo "clients: installing $oapi_codegen_module into .tools/bin"
  GOBIN="$root/.tools/bin" go install "$oapi_codegen_module"
  echo "$oapi_codegen_module" >"$root/.tools/bin/.oapi-codegen.version"
fi

work="$root/.data/generated-clients"
rm -rf "$work"
mkdir -p "$work/python" "$work/go/bookingapi" "$work/grpc/protos" "$work/grpc/python"

echo "clients: generating the Python client (openapi-python-client)"
# ruff, installed with openapi-python-client, formats what it generates when it is on PATH.
PATH="$venv/bin:$PATH" "$venv/bin/openapi-python-client" generate --path openapi/openapi.yaml \
  --output-path "$work/python/bus_booking_client" --meta none >"$work/python-generate.log"

echo "clients: generating the Go client (oapi-codegen, types and client)"
"$oapi_codegen" -generate types,client -package bookingapi openapi/openapi.yaml >"$work/go/bookingapi/bookingapi.gen.go"
cp clients/flows/rest_flow.go "$work/go/main.go"
(
  cd "$work/go"
  go mod init bus-booking-client-flow 2>/dev/null
  go get "$oapi_codegen_runtime" 2>/dev/null
  go mod tidy 2>/dev/null
  go build -o "$work/go/rest-flow" .
)

echo "clients: exporting the protos as one set (buf export) and generating the grpcio client"
node_modules/.bin/buf export proto --output "$work/grpc/protos"
# grpc.health stays out: its Python package would shadow grpcio's own `grpc`.
(cd "$work/grpc/protos" && find ./com ./google -name '*.proto' -print0 | xargs -0 "$venv/bin/python" -m grpc_tools.protoc \
  -I . --python_out="$work/grpc/python" --grpc_python_out="$work/grpc/python")

# The stack of `npm start` on loopback ports of its own, beside its data, so a developer's running stack is left alone.
stack_data="$root/.data/clients-stack"
export STACK_DATA_DIR="$stack_data"
export HTTP_PORT="${CLIENTS_HTTP_PORT:-28080}" GRPC_PORT="${CLIENTS_GRPC_PORT:-25051}"
export METRICS_PORT="${CLIENTS_METRICS_PORT:-29464}" WORKER_METRICS_PORT="${CLIENTS_WORKER_METRICS_PORT:-29465}"
export TEMPORAL_PORT="${CLIENTS_TEMPORAL_PORT:-27233}" TEMPORAL_UI_PORT="${CLIENTS_TEMPORAL_UI_PORT:-28233}"
export EMBEDDED_POSTGRES_PORT="${CLIENTS_POSTGRES_PORT:-25432}"
export HTTP_HOST=127.0.0.1 GRPC_HOST=127.0.0.1
# A create whose seats are not held in two seconds answers 202: the paused-worker flows wait that long.
export BOOKING_CREATE_ANSWER_TIMEOUT_MS=2000

echo "clients: starting the embedded stack (logs in $stack_data/stack.log)"
npm run --silent build:dev
mkdir -p "$stack_data"
node dist/dev/stack/start.js >"$stack_data/stack.log" 2>&1 &
stack_pid=$!
worker_pid=''
stop_stack() {
  [[ -n "$worker_pid" ]] && kill -CONT "$worker_pid" 2>/dev/null
  kill -TERM "$stack_pid" 2>/dev/null && wait "$stack_pid" 2>/dev/null
  return 0
}
trap stop_stack EXIT
base_url="http://127.0.0.1:$HTTP_PORT"
ready() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$base_url/readyz"; }
for _ in $(seq 1 240); do
  if ready; then break; fi
  if ! kill -0 "$stack_pid" 2>/dev/null; then
    tail -n 40 "$stack_data/stack.log" >&2
    echo "clients: the stack stopped before it was ready" >&2
    exit 1
  fi
  sleep 1
done
ready || { echo "clients: the stack was not ready in time" >&2; exit 1; }
worker_pid="$(pgrep -P "$stack_pid" -f 'dist/src/worker/main.js')"

export BASE_URL="$base_url" LOGIN_EMAIL=alice@example.com LOGIN_PASSWORD=alice-demo-password
export GRPC_ADDRESS="localhost:$GRPC_PORT" GRPC_CERT_DIR="$stack_data/certs"

run_flows() {
  PYTHONPATH="$work/python" "$venv/bin/python" clients/flows/rest_flow.py
  "$work/go/rest-flow"
  PYTHONPATH="$work/grpc/python" "$venv/bin/python" clients/flows/grpc_flow.py
}

echo "clients: flows with the worker running (create answers 201, gRPC CreateBooking OK)"
EXPECT_CREATE_STATUS=201 run_flows
echo "clients: the project's REST example (npm run rest:example, the TypeScript client)"
API_URL="$base_url" npx tsx scripts/rest-example.ts

echo "clients: flows with the worker paused past the answer deadline (create answers 202, gRPC UNAVAILABLE BOOKING_PROCESSING)"
# Passes a flow's lines through and resumes the worker once the create has answered, so the flow reads the booking.
resume_worker_after_create() {
  while IFS= read -r line; do
    echo "$line"
    case "$line" in *'createBooking 202'* | *'CreateBooking UNAVAILABLE'*) kill -CONT "$worker_pid" ;; esac
  done
}
for flow in python-rest go-rest python-grpc; do
  kill -STOP "$worker_pid"
  case "$flow" in
    python-rest) PYTHONPATH="$work/python" EXPECT_CREATE_STATUS=202 "$venv/bin/python" clients/flows/rest_flow.py ;;
    go-rest) EXPECT_CREATE_STATUS=202 "$work/go/rest-flow" ;;
    python-grpc) PYTHONPATH="$work/grpc/python" EXPECT_CREATE_STATUS=202 "$venv/bin/python" clients/flows/grpc_flow.py ;;
  esac 2>&1 | resume_worker_after_create
  kill -CONT "$worker_pid"
done
echo "clients: OK"
