#!/usr/bin/env bash
# MCP with clients nobody here wrote, against a real stack and headless Blender:
#  1. the official conformance suite (@modelcontextprotocol/conformance, Node 22)
#     against the gateway's Streamable HTTP endpoint: every scenario revisions
#     2025-11-25 and 2026-07-28 require (the suite's test_* tools, resources and
#     prompts are offered only with gateway.mcp_test_tools, as here);
#  2. the official TypeScript SDK client (@modelcontextprotocol/sdk) over stdio
#     (`blendmq mcp`) and over HTTP, listing and calling blendmq's tools, reading
#     and subscribing to the scene, completing names, getting a prompt;
#  3. `blendmq mcp` from a clean run dir starts a stack; two clients share it;
#  4. subscriptions hear every committed plan, whoever ran it (listen_client.mjs).
# usage: run_conformance.sh BIN_DIR WORK_DIR
# npm packages (tests/mcp/package-lock.json) are installed once into
# WORK_DIR/npm and reused while the lock file is unchanged.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
work="$2"
mkdir -p "$work/npm"

if ! command -v npm >/dev/null 2>&1; then
  echo "npm is not installed (deploy/install-deps.sh --test installs it)" >&2
  exit 1
fi
if ! cmp -s "$here/package-lock.json" "$work/npm/package-lock.json" || [ ! -x "$work/npm/node_modules/.bin/node" ]; then
  echo "== npm ci (conformance suite, SDK, Node 22) into $work/npm" >&2
  cp "$here/package.json" "$here/package-lock.json" "$work/npm/"
  (cd "$work/npm" && npm ci --no-audit --no-fund --loglevel=error >&2) || { echo "npm ci failed" >&2; exit 1; }
fi
cp "$here/sdk_client.mjs" "$here/auth_proxy.mjs" "$here/listen_client.mjs" "$work/npm/"
node="$work/npm/node_modules/.bin/node"
conformance="$work/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$node" --version | grep -q '^v22\.' || { echo "expected Node 22 from the node package" >&2; exit 1; }

cp "$here/mcp_autostart.mjs" "$work/npm/"
# `blendmq mcp` with no stack: starts one (two clients at once share it); --no-start does not
auto_dir="$(mktemp -d /tmp/bmq-mcp-auto-XXXXXX)"
rmdir "$auto_dir"
if timeout 300 "$node" "$work/npm/mcp_autostart.mjs" "$bin/blendmq" "$auto_dir"; then auto_ok=1; else auto_ok=0; fi
"$bin/blendmq" --run-dir "$auto_dir" down >/dev/null 2>&1
rm -rf "$auto_dir"

run_dir="$(mktemp -d /tmp/bmq-mcp-XXXXXX)"
stop() {
  "$bin/blendmq" --run-dir "$run_dir" down >/dev/null 2>&1
  if grep -H -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$run_dir"/logs/*.log >&2; then
    echo "sanitizer reports in the services' logs (kept in $run_dir)" >&2
    exit 1
  fi
  rm -rf "$run_dir"
}
trap stop EXIT
echo "== blendmq up (private stack in $run_dir, HTTP on a free port, conformance test tools on)" >&2
BLENDMQ_GATEWAY_MCP_TEST_TOOLS=true BLENDMQ_GATEWAY_HTTP_PORT=0 \
  "$bin/blendmq" --run-dir "$run_dir" up --ipc --validators 1 >&2 || { echo "the stack did not start" >&2; exit 1; }
url="$("$bin/blendmq" --run-dir "$run_dir" --json status | "$node" -e \
  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).endpoints.mcp))')"
echo "== MCP endpoint $url" >&2
# Every route needs a token (issue 12): clients use the `mcp` client's (role operator).
token_file="$run_dir/keys/mcp.token"
[ -s "$token_file" ] || { echo "no $token_file: \`blendmq up\` should have made the keys" >&2; exit 1; }
# without a token: 401
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' "$url")"
[ "$code" = 401 ] || { echo "POST /mcp without a token answered $code, expected 401" >&2; exit 1; }
# the conformance suite cannot send a token: a local proxy adds it
proxy_out="$(mktemp)"
"$node" "$work/npm/auth_proxy.mjs" "${url%/mcp}" "$token_file" >"$proxy_out" &
proxy_pid=$!
for _ in $(seq 50); do [ -s "$proxy_out" ] && break; sleep 0.1; done
proxied="$(head -n1 "$proxy_out")/mcp"
stop_proxy() { kill "$proxy_pid" 2>/dev/null; rm -f "$proxy_out"; }
trap 'stop_proxy; stop' EXIT

passed=0; failed=0
if [ "$auto_ok" = 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# Every scenario a revision requires, frozen at its release (--requirements): 2025-11-25 (sessions,
# initialize) and 2026-07-28 (no sessions: server/discover, per-request _meta, input-required results).
# The suite exits non-zero when a scored scenario fails; extension and pending scenarios it runs too
# (tasks-*, http-custom-header-server-validation) are listed but do not count (see its summary).
for rev in 2025-11-25 2026-07-28; do
  out_dir="$work/conformance-$rev"
  rm -rf "$out_dir"
  if out="$(timeout 600 "$node" "$conformance" server --url "$proxied" --requirements "$rev" -o "$out_dir" 2>&1)"; then
    echo "ok   conformance --requirements $rev"; passed=$((passed + 1))
  else
    echo "FAIL conformance --requirements $rev"; failed=$((failed + 1))
  fi
  echo "$out" | sed -n '/=== SUMMARY/,$p'
done

for mode in stdio http; do
  if [ "$mode" = stdio ]; then args=(stdio "$bin/blendmq" "$run_dir"); else args=(http "$url"); fi
  # BLENDMQ_BIN/RUN_DIR: the person who approves a script an MCP client asked for (the CLI)
  if (cd "$work/npm" && BLENDMQ_TOKEN="$(cat "$token_file")" BLENDMQ_BIN="$bin/blendmq" BLENDMQ_RUN_DIR="$run_dir" \
        timeout 300 "$node" sdk_client.mjs "${args[@]}"); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done

# subscriptions hear every committed plan: the CLI's (another key), another session's; over the SDK's
# HTTP and stdio transports, a raw GET stream (resumed), 2026-07-28 subscriptions/listen; streams bounded
if (cd "$work/npm" && BLENDMQ_TOKEN="$(cat "$token_file")" timeout 300 "$node" listen_client.mjs "$url" "$bin/blendmq" "$run_dir"); then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
fi

# blendmq's long tools as tasks (2026-07-28, the tasks extension): no SDK speaks it yet, plain HTTP does
if (cd "$work/npm" && BLENDMQ_TOKEN="$(cat "$token_file")" timeout 400 "$node" "$here/tasks_client.mjs" "$url"); then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
