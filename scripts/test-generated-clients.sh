#!/usr/bin/env bash
# `npm run test:clients`: generates REST clients with five generators and a grpcio client from the contracts, and runs create -> read -> pay -> cancel with each against the embedded stack.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# Pins: each tool is reinstalled into .tools/ only when its pin changes.
python_client_pin='openapi-python-client==0.29.1'
grpcio_tools_pin='grpcio-tools==1.85.1'
oapi_codegen_module='github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2'
oapi_codegen_runtime='github.com/oapi-codegen/runtime@v1.9.0'
openapi_generator_version='7.25.0'
# What openapi-generator's `python` client imports beside pydantic, which openapi-python-client brings.
openapi_generator_python_pins='urllib3==2.8.0 python-dateutil==4.0.0'

mkdir -p "$root/.tools"
# The real path, so checkouts sharing one .tools (a symlink) share one venv instead of reinstalling in turn.
venv="$(cd "$root/.tools" && pwd -P)/venv"
venv_pins="$python_client_pin $grpcio_tools_pin $openapi_generator_python_pins"
# The venv's own path beside its pins: its scripts name their interpreter by absolute path, so a moved checkout
# reinstalls.
venv_marker="$venv_pins $venv"
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.pins" 2>/dev/null)" != "$venv_marker" ]]; then
  echo "clients: installing $venv_pins into .tools/venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # shellcheck disable=SC2086 # one pin a word
  "$venv/bin/pip" install --quiet --disable-pip-version-check $venv_pins
  echo "$venv_marker" >"$venv/.pins"
fi
oapi_codegen="$root/.tools/bin/oapi-codegen"
if [[ ! -x "$oapi_codegen" || "$(cat "$root/.tools/bin/.oapi-codegen.version" 2>/dev/null)" != "$oapi_codegen_module" ]]; then
  echo "clients: installing $oapi_codegen_module into .tools/bin"
  GOBIN="$root/.tools/bin" go install "$oapi_codegen_module"
  echo "$oapi_codegen_module" >"$root/.tools/bin/.oapi-codegen.version"
fi

# openapi-generator's CLI is one jar from Maven Central, kept in .tools/m2 like the other Java tools' downloads.
maven_repo="$root/.tools/m2"
openapi_generator_jar="$maven_repo/org/openapitools/openapi-generator-cli/$openapi_generator_version/openapi-generator-cli-$openapi_generator_version.jar"
if [[ ! -f "$openapi_generator_jar" ]]; then
  command -v mvn >/dev/null || { echo "clients: Maven (mvn) is needed to download openapi-generator-cli" >&2; exit 1; }
  echo "clients: downloading openapi-generator-cli $openapi_generator_version into .tools/m2"
  mkdir -p "$maven_repo"
  # -C: a download whose checksum does not match Maven Central's fails instead of being installed.
  if ! mvn -B -C dependency:get -Dartifact="org.openapitools:openapi-generator-cli:$openapi_generator_version" \
    -Dtransitive=false -Dmaven.repo.local="$maven_repo" >"$maven_repo/openapi-generator-cli-download.log" 2>&1; then
    tail -n 30 "$maven_repo/openapi-generator-cli-download.log" >&2
    echo "clients: Maven could not download openapi-generator-cli $openapi_generator_version" >&2
    exit 1
  fi
fi

work="$root/.data/generated-clients"
rm -rf "$work"
mkdir -p "$work/python" "$work/go/bookingapi" "$work/grpc/protos" "$work/grpc/python" \
  "$work/typescript-fetch" "$work/openapi-fetch"

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

echo "clients: generating the Python client (openapi-generator python) and compiling every module"
java -jar "$openapi_generator_jar" generate -g python -i openapi/openapi.yaml -o "$work/openapi-generator-python" \
  >"$work/openapi-generator-python.log"
"$venv/bin/python" -m compileall -q "$work/openapi-generator-python/openapi_client"

# Both TypeScript clients compile with strict tsc, generated code and flow together, as CommonJS for node to run.
compile_typescript_flow() {
  local directory="$1" flow="$2"
  cp "$flow" "$directory/flow.ts"
  echo '{ "type": "commonjs" }' >"$directory/package.json"
  node_modules/.bin/tsc --strict --target es2022 --module node16 --lib es2022,dom --types node \
    --outDir "$directory/out" "$directory/flow.ts"
}
echo "clients: generating the TypeScript client (openapi-generator typescript-fetch) and compiling it with strict tsc"
java -jar "$openapi_generator_jar" generate -g typescript-fetch -i openapi/openapi.yaml -o "$work/typescript-fetch/client" \
  >"$work/typescript-fetch.log"
compile_typescript_flow "$work/typescript-fetch" clients/flows/rest_flow_typescript_fetch.ts

echo "clients: generating the TypeScript types (openapi-typescript) and compiling them with an openapi-fetch flow, strict tsc"
node_modules/.bin/openapi-typescript openapi/openapi.yaml --output "$work/openapi-fetch/schema.ts" >"$work/openapi-typescript.log"
compile_typescript_flow "$work/openapi-fetch" clients/flows/rest_flow_openapi_fetch.ts

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

# shellcheck source=scripts/lib/embedded-stack.sh
source scripts/lib/embedded-stack.sh
trap stop_embedded_stack EXIT
start_embedded_stack "$stack_data" clients
base_url="$stack_url"

export BASE_URL="$base_url" LOGIN_EMAIL=alice@example.com LOGIN_PASSWORD=alice-demo-password
export GRPC_ADDRESS="localhost:$GRPC_PORT" GRPC_CERT_DIR="$stack_data/certs"

# Each client's flow; every flow prints a last line "<label>: outcome ..." that the results quote.
clients=(openapi-python-client oapi-codegen openapi-generator-python typescript-fetch openapi-fetch grpcio)
flow() {
  case "$1" in
    openapi-python-client) PYTHONPATH="$work/python" "$venv/bin/python" clients/flows/rest_flow.py ;;
    oapi-codegen) "$work/go/rest-flow" ;;
    openapi-generator-python)
      PYTHONPATH="$work/openapi-generator-python" "$venv/bin/python" clients/flows/rest_flow_openapi_generator.py
      ;;
    typescript-fetch) node "$work/typescript-fetch/out/flow.js" ;;
    openapi-fetch) node "$work/openapi-fetch/out/flow.js" ;;
    grpcio) PYTHONPATH="$work/grpc/python" "$venv/bin/python" clients/flows/grpc_flow.py ;;
  esac
}

# Passes a flow's lines through and resumes the worker once the create has answered, so the flow reads the booking.
resume_worker_after_create() {
  while IFS= read -r line; do
    echo "$line"
    case "$line" in *'createBooking 202'* | *'CreateBooking UNAVAILABLE'*) kill -CONT "$worker_pid" ;; esac
  done
}

# One flow against one create answer; a failed flow is recorded and the others still run, so the results name each.
declare -A results
failed=0
run_flow() {
  local client="$1" status="$2" log="$work/flow-$1-$2.log" flow_status=0
  if [[ "$status" == 202 ]]; then
    kill -STOP "$worker_pid"
    EXPECT_CREATE_STATUS=202 flow "$client" 2>&1 | resume_worker_after_create | tee "$log" || flow_status=$?
    kill -CONT "$worker_pid"
  else
    EXPECT_CREATE_STATUS=201 flow "$client" 2>&1 | tee "$log" || flow_status=$?
  fi
  local outcome
  outcome="$(sed -n 's/^.*: outcome //p' "$log")"
  if [[ "$flow_status" -eq 0 && -n "$outcome" ]]; then
    results["$client $status"]="ok ($outcome)"
  else
    results["$client $status"]='FAILED'
    failed=1
  fi
}

echo "clients: flows with the worker running (create answers 201, gRPC CreateBooking OK)"
for client in "${clients[@]}"; do run_flow "$client" 201; done
echo "clients: the project's REST example (npm run rest:example, the TypeScript client)"
API_URL="$base_url" npx tsx scripts/rest-example.ts

echo "clients: flows with the worker paused past the answer deadline (create answers 202, gRPC UNAVAILABLE BOOKING_PROCESSING)"
for client in "${clients[@]}"; do run_flow "$client" 202; done

echo "clients: results (outcome: the create's answer, the reads that answered PROCESSING, then the booking's statuses)"
for client in "${clients[@]}"; do
  printf 'clients: %-25s 201 %s\n' "$client" "${results["$client 201"]}"
  printf 'clients: %-25s 202 %s\n' "$client" "${results["$client 202"]}"
done
if [[ "$failed" -ne 0 ]]; then
  echo "clients: FAILED (each failed flow's output is above and in $work/flow-<client>-<status>.log)" >&2
  exit 1
fi
echo "clients: OK in ${SECONDS} s"
