#!/usr/bin/env bash
# Install, build, and run every test with ctest: once in a normal build, and
# once built with AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
# Tests never reach a real LLM: the planner's clients are tested against local fake servers.
unset GEMINI_API_KEY OPENAI_API_KEY
deploy/install-deps.sh --test
echo "== build (RelWithDebInfo) and test" >&2
deploy/build.sh
(cd build && ctest --output-on-failure --timeout 600)
echo "== build (ASan + UBSan) and test" >&2
BUILD_DIR=build-asan BUILD_TYPE=Debug deploy/build.sh -DBMQ_SANITIZE=ON
# The fault-injection suite (faults.stack) times answers and heals against heartbeat
# bounds and takes minutes: it runs in the pass above only, where its timings mean something.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   ctest --output-on-failure --timeout 900 -E '^faults\.stack$')
echo "== fuzz the decoders (libFuzzer, ${BMQ_FUZZ_SECONDS:-30} s each)" >&2
CC=clang BUILD_TARGETS="fuzz_envelope fuzz_yaml fuzz_plan" BUILD_DIR=build-fuzz BUILD_TYPE=Debug deploy/build.sh -DBMQ_SANITIZE=ON -DBMQ_FUZZ=ON \
   -DBMQ_FUZZ_SECONDS="${BMQ_FUZZ_SECONDS:-30}"
(cd build-fuzz && ctest --output-on-failure -R '^fuzz\.')
