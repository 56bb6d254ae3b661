# Sourced by the scripts that run a flow against `npm start`'s stack on ports of their own (the caller exports them).
# start_embedded_stack <data dir> <label>: builds, starts the stack, waits for /readyz, and sets stack_pid,
# worker_pid (the worker the caller may pause with kill -STOP) and stack_url; stop_embedded_stack ends it (trap it).

stack_pid=''
worker_pid=''

stop_embedded_stack() {
  [[ -n "$worker_pid" ]] && kill -CONT "$worker_pid" 2>/dev/null
  [[ -n "$stack_pid" ]] && kill -TERM "$stack_pid" 2>/dev/null && wait "$stack_pid" 2>/dev/null
  return 0
}

start_embedded_stack() {
  local data="$1" label="$2"
  stack_url="http://127.0.0.1:$HTTP_PORT"
  echo "$label: starting the embedded stack (logs in $data/stack.log)"
  npm run --silent build:dev
  mkdir -p "$data"
  STACK_DATA_DIR="$data" node dist/dev/stack/start.js >"$data/stack.log" 2>&1 &
  stack_pid=$!
  local ready_check='fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))'
  for _ in $(seq 1 240); do
    if node -e "$ready_check" "$stack_url/readyz"; then
      worker_pid="$(pgrep -P "$stack_pid" -f 'dist/src/worker/main.js')"
      return 0
    fi
    if ! kill -0 "$stack_pid" 2>/dev/null; then
      tail -n 40 "$data/stack.log" >&2
      echo "$label: the stack stopped before it was ready" >&2
      return 1
    fi
    sleep 1
  done
  echo "$label: the stack was not ready in time" >&2
  return 1
}
