#!/usr/bin/env bash
# `npm run test:client-package`: packs @bus-booking/client, installs the tarball into a project outside the repository,
# compiles clients/typescript/example there with strict tsc and runs it with node against the embedded stack.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
started=$SECONDS
say() { echo "client-package: $*"; }

work="$(mktemp -d)"
outside="$(mktemp -d)"
# shellcheck source=scripts/lib/embedded-stack.sh
source scripts/lib/embedded-stack.sh
cleanup() {
  stop_embedded_stack
  rm -rf "$work" "$outside"
  return 0
}
trap cleanup EXIT

# npm pack runs the package's prepack, which builds dist/ (ES modules, CommonJS, declarations).
pack_json="$work/pack.json"
npm pack --workspace clients/typescript --pack-destination "$work" --json --silent >"$pack_json"
read -r tarball pack_line < <(node -e '
  const [pack] = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  const kB = (bytes) => (bytes / 1024).toFixed(1) + " kB";
  console.log(pack.filename, `${pack.id}: ${pack.filename} ${kB(pack.size)} packed, ${kB(pack.unpackedSize)} unpacked, ${pack.entryCount} files`);
' "$pack_json")
say "packed $pack_line"
say "tarball holds: $(node -e '
  const [pack] = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  console.log(pack.files.map((file) => file.path).sort().join(" "));
' "$pack_json")"

# An integrator's project: its own package.json and tsconfig, nothing of the repository but the tarball and the example.
typescript_version="$(node -p 'require("typescript/package.json").version')"
types_node_version="$(node -p 'require("@types/node/package.json").version')"
cat >"$outside/package.json" <<'JSON'
{ "name": "client-package-integrator", "private": true, "type": "module" }
JSON
cat >"$outside/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "lib": ["ES2022"],
    "types": ["node"],
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "rootDir": "src",
    "outDir": "dist"
  },
  "include": ["src"]
}
JSON
mkdir -p "$outside/src"
cp clients/typescript/example/*.ts clients/typescript/example/*.cts "$outside/src/"
install_started=$SECONDS
(cd "$outside" && npm install --prefer-offline --no-audit --no-fund --silent \
  "$work/$tarball" "typescript@$typescript_version" "@types/node@$types_node_version")
installed_version="$(cd "$outside" && node -p 'require("@bus-booking/client/package.json").version')"
say "installed @bus-booking/client@$installed_version from the tarball, typescript@$typescript_version, @types/node@$types_node_version into $outside ($((SECONDS - install_started)) s)"

(cd "$outside" && node_modules/.bin/tsc -p .)
say "tsc OK (strict, noUncheckedIndexedAccess, module nodenext, declarations checked): $(cd "$outside/dist" && ls | tr '\n' ' ')"
(cd "$outside" && node dist/require-check.cjs) | sed 's/^/client-package: CommonJS entry: /'
(cd "$outside" && node -e 'const c = require("@bus-booking/client"); if (typeof c.createBookingServiceClient !== "function") process.exit(1)')
say "CommonJS entry: node -e \"require('@bus-booking/client')\" OK"

# The stack of `npm start` on loopback ports of its own, beside its data, with the example's two OAuth clients.
stack_data="$root/.data/client-package-stack"
export STACK_DATA_DIR="$stack_data"
export HTTP_PORT="${CLIENT_PACKAGE_HTTP_PORT:-38080}" GRPC_PORT="${CLIENT_PACKAGE_GRPC_PORT:-35051}"
export METRICS_PORT="${CLIENT_PACKAGE_METRICS_PORT:-39464}"
export WORKER_METRICS_PORT="${CLIENT_PACKAGE_WORKER_METRICS_PORT:-39465}"
export TEMPORAL_PORT="${CLIENT_PACKAGE_TEMPORAL_PORT:-37233}"
export TEMPORAL_UI_PORT="${CLIENT_PACKAGE_TEMPORAL_UI_PORT:-38233}"
export EMBEDDED_POSTGRES_PORT="${CLIENT_PACKAGE_POSTGRES_PORT:-35432}"
export HTTP_HOST=127.0.0.1 GRPC_HOST=127.0.0.1
base_url="http://127.0.0.1:$HTTP_PORT"
export IDP_ISSUER="$base_url"
# Short-lived access tokens, so the token source refreshes while the program runs.
export IDP_ACCESS_TOKEN_TTL_SECONDS=20
# A create whose seats are not held in two seconds answers 202: the paused-worker run waits that long.
export BOOKING_CREATE_ANSWER_TIMEOUT_MS=2000
app_client_id=client-package-app
app_redirect_uri=com.example.busbooking.integrator:/oauth2redirect
service_client_id=client-package-service
service_client_secret="$(node -p 'require("node:crypto").randomBytes(32).toString("base64url")')"
IDP_CLIENTS="$(node -p 'JSON.stringify([
  { client_id: process.argv[1], kind: "native", redirect_uris: [process.argv[2]] },
  { client_id: process.argv[3], kind: "service", client_secret: process.argv[4], scopes: ["routes:read"], roles: ["agent"] },
])' "$app_client_id" "$app_redirect_uri" "$service_client_id" "$service_client_secret")"
export IDP_CLIENTS

start_embedded_stack "$stack_data" client-package
say "stack ready at $base_url ($((SECONDS - started)) s since the start)"

run_walkthrough() {
  (cd "$outside" && API_URL="$base_url" ISSUER="$IDP_ISSUER" ALLOW_INSECURE_REQUESTS=true \
    APP_CLIENT_ID="$app_client_id" APP_REDIRECT_URI="$app_redirect_uri" \
    SERVICE_CLIENT_ID="$service_client_id" SERVICE_CLIENT_SECRET="$service_client_secret" \
    USER_EMAIL=alice@example.com USER_PASSWORD=alice-demo-password node dist/walkthrough.js)
}

say "node dist/walkthrough.js with the worker running (create answers 201)"
EXPECT_CREATE_STATUS=201 run_walkthrough

say "node dist/walkthrough.js with the worker paused past the answer deadline (create answers 202)"
# Passes the program's lines through and resumes the worker once the create has answered, so the poll finds the booking.
resume_worker_after_create() {
  while IFS= read -r line; do
    echo "$line"
    case "$line" in *'createBooking 202'*) kill -CONT "$worker_pid" ;; esac
  done
}
kill -STOP "$worker_pid"
EXPECT_CREATE_STATUS=202 run_walkthrough 2>&1 | resume_worker_after_create
kill -CONT "$worker_pid"
say "OK in $((SECONDS - started)) s"
