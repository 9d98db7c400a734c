#!/usr/bin/env bash
# tests/web: run_web_test.sh BIN_DIR WORK_DIR up | down | TEST
#   up    npm ci (tests/web/package-lock.json, into WORK_DIR/npm, reused while the
#         lock is unchanged), then a private stack: `blendmq up --ipc` in a fresh run
#         dir, HTTP on a free port chosen here (fixed, so a restarted gateway comes
#         back on the same address and the page's stream can reconnect)
#   down  `blendmq down`, a check of the services' logs for sanitizer reports
#   TEST  node web_test.mjs TEST against that stack (prompt, rollback, review, load, scriptcancel, reconnect)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1" work="$2" what="$3"
mkdir -p "$work/npm" "$work/screenshots"
node="$work/npm/node_modules/.bin/node"

case "$what" in
up)
  command -v npm >/dev/null 2>&1 || { echo "npm is not installed (deploy/install-deps.sh installs it)" >&2; exit 1; }
  [ -x /usr/bin/chromium ] || { echo "/usr/bin/chromium is missing (deploy/install-deps.sh --test installs it)" >&2; exit 1; }
  if ! cmp -s "$here/package-lock.json" "$work/npm/package-lock.json" || [ ! -x "$node" ]; then
    echo "== npm ci (playwright-core, axe-core, Node 22) into $work/npm" >&2
    cp "$here/package.json" "$here/package-lock.json" "$work/npm/"
    (cd "$work/npm" && npm ci --no-audit --no-fund --loglevel=error >&2) || { echo "npm ci failed" >&2; exit 1; }
  fi
  if [ -s "$work/run_dir" ] && [ -d "$(cat "$work/run_dir")" ]; then      # a stack left by an interrupted run
    "$bin/blendmq" --run-dir "$(cat "$work/run_dir")" down >/dev/null 2>&1
    rm -rf "$(cat "$work/run_dir")"
  fi
  run_dir="$(mktemp -d /tmp/bmq-webtest-XXXXXX)"
  echo "$run_dir" > "$work/run_dir"
  port="$("$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  echo "== blendmq up (private stack in $run_dir, HTTP on 127.0.0.1:$port)" >&2
  BLENDMQ_GATEWAY_HTTP_PORT="$port" "$bin/blendmq" --run-dir "$run_dir" up --ipc >&2 || { echo "the stack did not start" >&2; exit 1; }
  echo "http://127.0.0.1:$port" > "$work/url"
  ;;
down)
  [ -s "$work/run_dir" ] || exit 0
  run_dir="$(cat "$work/run_dir")"
  "$bin/blendmq" --run-dir "$run_dir" down >&2
  if grep -H -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$run_dir"/logs/*.log >&2; then
    echo "sanitizer reports in the services' logs (kept in $run_dir)" >&2
    exit 1
  fi
  rm -rf "$run_dir" "$work/run_dir"
  ;;
*)
  [ -x "$node" ] && [ -s "$work/run_dir" ] || { echo "no stack: web.stack_up did not run or failed" >&2; exit 1; }
  cd "$work" && exec "$node" "$here/web_test.mjs" "$what" --bin "$bin" --run-dir "$(cat "$work/run_dir")" \
    --url "$(cat "$work/url")" --modules "$work/npm/node_modules"
  ;;
esac
