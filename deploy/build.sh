#!/usr/bin/env bash
# Configure and build into build/ (extra CMake arguments pass through).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B "${BUILD_DIR:-build}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
cmake --build "${BUILD_DIR:-build}" -j"$(nproc)" >/dev/null
