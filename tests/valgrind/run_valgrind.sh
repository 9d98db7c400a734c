#!/usr/bin/env bash
# Every service runs under valgrind through a real request (the snowman,
# a rejected plan, status, a render), then stops: no memory errors, nothing
# definitely lost. Usage: run_valgrind.sh BIN_DIR
set -euo pipefail
bin="$1"
dir=$(mktemp -d /tmp/bmq-valgrind-XXXXXX)
trap '"$bin/blendmq" --run-dir "$dir" down >/dev/null 2>&1 || true' EXIT
export BLENDMQ_WRAPPER="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --log-file=$dir/logs/valgrind-%p.log"
mkdir -p "$dir/logs"
"$bin/blendmq" --run-dir "$dir" up --ipc --validators 1
"$bin/blendmq" --run-dir "$dir" chat "build a snowman" >/dev/null
printf '[{"operation": "bpy.ops.wm.quit_blender"}]' > "$dir/bad.json"
"$bin/blendmq" --run-dir "$dir" plan run "$dir/bad.json" >/dev/null && { echo "bad plan accepted"; exit 1; }
"$bin/blendmq" --run-dir "$dir" status >/dev/null
"$bin/blendmq" --run-dir "$dir" scene render "$dir/x.png"
"$bin/blendmq" --run-dir "$dir" down
trap - EXIT
logs=("$dir"/logs/valgrind-*.log)
[ ${#logs[@]} -ge 5 ] || { echo "expected a valgrind log per service, got ${#logs[@]}"; exit 1; }
bad=0
for log in "${logs[@]}"; do
  svc=$(grep -m1 -o 'blendmq-[a-z]*' "$log" || echo "?")
  errors=$(grep -o 'ERROR SUMMARY: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo missing)
  lost=$(grep -o 'definitely lost: [0-9,]* bytes' "$log" | tail -1 || echo "definitely lost: 0 bytes")
  echo "$svc: errors=$errors, $lost"
  if [ "$errors" != 0 ] || ! echo "$lost" | grep -q 'lost: 0 bytes'; then
    bad=1; cat "$log"
    # no summary: the process never exited by itself (killed at stop?); say what it and the supervisor last wrote
    short=${svc#blendmq-}
    for f in "$dir/logs/$short.log" "$dir/logs/supervisor.log"; do
      [ -f "$f" ] && { echo "--- tail of $f"; tail -15 "$f"; }
    done
  fi
done
rm -rf "$dir"
[ $bad = 0 ] && echo "valgrind: all services clean"
exit $bad
