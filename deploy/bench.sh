#!/usr/bin/env bash
# Run the benchmarks: every one (deploy/bench.sh) or some (deploy/bench.sh NAME...).
#
# A benchmark is an executable build/bin/bench_NAME built by CMake; each prints
# JSON lines {"bench": NAME, "metric": ..., "value": ..., "unit": ..., ...}.
# To add one, add a bench_NAME executable target: nothing here changes.
# Builds first with deploy/build.sh (BUILD_DIR, BUILD_TYPE pass through);
# BENCH_NO_BUILD=1 runs what is already built. Exit 1 if any bench failed.
# Benches run with CURVE on (security.curve); BLENDMQ_SECURITY_CURVE=false runs
# them without it, and curve_overhead compares the two in one run.
# `deploy/bench.sh soak [MINUTES]` (default 10, or SOAK_MINUTES) runs the soak
# alone: mixed load on a private stack, RSS/fd growth per service and p99
# drift. It is long, so it runs only when named (not with every bench).
# A bench that cannot run here exits 77 with its reason: it is listed as
# skipped at the end (not a failure); one that fails is listed as failed.
# Every bench also runs as a ctest test with small counts (`ctest -L bench`,
# tests/bench/CMakeLists.txt): that checks it works, not its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
  echo "== build ($build_dir)" >&2
  deploy/build.sh
fi
bin="$build_dir/bin"

available=()
for exe in "$bin"/bench_*; do
  [ -x "$exe" ] && available+=("$(basename "$exe" | sed 's/^bench_//')")
done
soak_args=()
if [ "${1:-}" = soak ]; then
  names=(soak)
  if [ $# -gt 1 ]; then soak_args=("$2"); fi
elif [ $# -gt 0 ]; then names=("$@")
else
  names=()
  for n in "${available[@]}"; do [ "$n" = soak ] || names+=("$n"); done
fi
if [ ${#names[@]} -eq 0 ]; then echo "no benchmarks in $bin" >&2; exit 1; fi

status=0
failed=()
skipped=()
for name in "${names[@]}"; do
  exe="$bin/bench_$name"
  if [ ! -x "$exe" ]; then
    echo "unknown bench '$name' (available: ${available[*]:-none})" >&2
    exit 2
  fi
  echo "== bench $name" >&2
  if [ "$name" = soak ]; then args=(${soak_args[@]+"${soak_args[@]}"}); else args=(); fi
  rc=0
  "$exe" ${args[@]+"${args[@]}"} || rc=$?
  if [ "$rc" = 77 ]; then echo "bench $name skipped (its reason is above)" >&2; skipped+=("$name")
  elif [ "$rc" != 0 ]; then echo "bench $name failed (exit $rc)" >&2; failed+=("$name"); status=1
  fi
done
echo "== benches: ${#names[@]} run, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}, ${#skipped[@]} skipped${skipped[*]:+: ${skipped[*]}}" >&2
exit $status
