#!/usr/bin/env bash
# Configure and build into build/ (extra CMake arguments pass through).
# BUILD_DIR, BUILD_TYPE, CC and BUILD_TARGETS (space-separated) adjust it.
set -euo pipefail
cd "$(dirname "$0")/.."
CC="${CC:-cc}" cmake -S . -B "${BUILD_DIR:-build}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "${BUILD_DIR:-build}" -j"$(nproc)" "${targets[@]}" >/dev/null
