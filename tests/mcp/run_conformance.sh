#!/usr/bin/env bash
# MCP with clients nobody here wrote, against a real stack and headless Blender:
#  1. the official conformance suite (@modelcontextprotocol/conformance, Node 22)
#     against the gateway's Streamable HTTP endpoint, every scenario that applies
#     to a server offering tools and logging (the tools-call scenarios use the
#     suite's test_* tools, which the stack offers only with gateway.mcp_test_tools);
#  2. the official TypeScript SDK client (@modelcontextprotocol/sdk) over stdio
#     (`blendmq mcp`) and over HTTP, listing and calling blendmq's tools.
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
cp "$here/sdk_client.mjs" "$work/npm/"
node="$work/npm/node_modules/.bin/node"
conformance="$work/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$node" --version | grep -q '^v22\.' || { echo "expected Node 22 from the node package" >&2; exit 1; }

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

passed=0; failed=0
scenarios=(server-initialize ping logging-set-level tools-list dns-rebinding-protection server-sse-multiple-streams
           json-schema-2020-12 tools-call-simple-text tools-call-image tools-call-audio tools-call-embedded-resource
           tools-call-mixed-content tools-call-error tools-call-with-logging tools-call-with-progress)
for s in "${scenarios[@]}"; do
  if out="$(timeout 120 "$node" "$conformance" server --url "$url" --scenario "$s" 2>&1)"; then
    echo "ok   conformance $s"; passed=$((passed + 1))
  else
    echo "FAIL conformance $s"; echo "$out" | tail -n 20; failed=$((failed + 1))
  fi
done

for mode in stdio http; do
  if [ "$mode" = stdio ]; then args=(stdio "$bin/blendmq" "$run_dir"); else args=(http "$url"); fi
  if (cd "$work/npm" && timeout 300 "$node" sdk_client.mjs "${args[@]}"); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
