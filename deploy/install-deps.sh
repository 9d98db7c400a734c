#!/usr/bin/env bash
# Install what blendmq needs from Debian 12's archive (only what is missing).
set -euo pipefail
PKGS=(build-essential cmake pkg-config
      libzmq3-dev libczmq-dev libmsgpack-dev libcurl4-openssl-dev libyaml-dev libcmocka-dev
      libjansson-dev libsqlite3-dev libsodium-dev libseccomp-dev sqlite3 libmicrohttpd-dev libzip-dev
      python3.11-dev libpython3-dev bubblewrap blender python3-numpy)
# (python3-numpy: Debian's Blender 3.4 imports and exports glTF only with it: asset imports)
# Node.js and npm build the web page (services/gateway/web: npm ci, then esbuild, at
# build time); a machine that has them already (say from NodeSource) keeps its own.
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
# deploy/install-deps.sh --test adds what the test suite needs beyond that:
# clang and its libFuzzer runtime for the fuzz targets.
[ "${1:-}" = "--test" ] && PKGS+=(clang libclang-rt-14-dev valgrind)
# ...wrk for bench_http_capabilities (npm, above, also serves the MCP conformance
# suite and SDK client in tests/mcp: npm brings its own Node 22).
[ "${1:-}" = "--test" ] && PKGS+=(wrk)
# ...chromium, driven by playwright-core, for the web page's tests (tests/web).
[ "${1:-}" = "--test" ] && PKGS+=(chromium)
# ...python3-yaml: tests drive the add-on's run_step directly (no executor, no hello), and
# it then reads the palette's bounds from proto/palette.yaml (blendmq_addon.py).
[ "${1:-}" = "--test" ] && PKGS+=(python3-yaml)
# ...xvfb and xauth (xvfb-run) for the GUI add-on test and bench (tests/gui, gui_read_p50_ms).
[ "${1:-}" = "--test" ] && PKGS+=(xvfb xauth)
# ...tcpdump and iproute2 (ip netns, veth, bridge) for the multi-host test (tests/multihost).
[ "${1:-}" = "--test" ] && PKGS+=(tcpdump iproute2)
# ...debootstrap for the newer Blenders the Blender-facing tests also run on (issue 30):
# deploy/blender-roots.sh, below, builds (once; cached) Debian trixie's 4.3 and sid's 5.2.
[ "${1:-}" = "--test" ] && PKGS+=(debootstrap)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
# The Blender roots (/var/cache/blendmq-roots, wrappers in /opt/blendmq/blender-X.Y/blender;
# BLENDMQ_ROOTS_DIR and BLENDMQ_BLENDERS_DIR move them). BLENDMQ_BLENDER_ROOTS=none skips them.
if [ "${1:-}" = "--test" ] && [ "${BLENDMQ_BLENDER_ROOTS:-}" != none ]; then
  ${SUDO:+sudo --preserve-env=BLENDMQ_ROOTS_DIR,BLENDMQ_BLENDERS_DIR,BLENDMQ_DEBIAN_MIRROR} \
    "$(dirname "$0")/blender-roots.sh" >&2 ||
    echo "install-deps: the newer Blenders' roots could not be built (above); deploy/test.sh reports their passes as not run" >&2
fi
