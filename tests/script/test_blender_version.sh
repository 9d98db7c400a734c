#!/bin/bash
# script.blender_version (issue 30): the stack knows which Blender it talks to, and checks
# scripts against the RNA recorded for that very version, through the real stack (`up`):
#  1. `status` names the executor's Blender version, `status --json` has blender_version;
#  2. a script whose operators this Blender has is sandboxed;
#  3. a script calling bpy.ops.object.face_map_add (Blender 3.4 has it, 4.x and 5.x do not):
#     the validator's own table lets it through; on 3.4 it is sandboxed, on 4.3 and 5.2 the
#     executor refuses it before anything runs, naming the operator and the version.
# deploy/test.sh runs it on 3.4, then on 4.3 and 5.2 (BLENDMQ_BLENDER, a blender on PATH).
# Usage: test_blender_version.sh BIN_DIR. Exit 77 without Blender or bubblewrap.
set -u
BIN=$1
BLENDER=${BLENDMQ_BLENDER:-blender}
command -v "$BLENDER" >/dev/null || { echo "skipped: no Blender"; exit 77; }
bwrap --unshare-all --die-with-parent --ro-bind / / /bin/true 2>/dev/null || { echo "skipped: bubblewrap cannot run here"; exit 77; }
WANT=$("$BLENDER" --version 2>/dev/null | sed -n 's/^Blender \([0-9][0-9.]*\).*/\1/p' | head -1)
W=$(mktemp -d /tmp/bmq-bver-XXXXXX)
R=$W/run
mkdir -m 700 "$R"
fail() { echo "FAIL: $*"; "$BIN/blendmq" --run-dir "$R" status 2>&1 | sed 's/^/  status: /'; tail -5 "$R"/logs/executor.log 2>/dev/null; "$BIN/blendmq" --run-dir "$R" down >/dev/null 2>&1; rm -rf "$W"; exit 1; }
ok() { echo "ok    $*"; }
[ -n "$WANT" ] || fail "$BLENDER --version names no version"
wait_for() {    # SECONDS DESCRIPTION COMMAND...
    local t=$1 what=$2; shift 2
    for _ in $(seq 1 $((t * 5))); do "$@" && return 0; sleep 0.2; done
    fail "$what (waited $t s)"
}

"$BIN/blendmq" --run-dir "$R" up --ipc --validators 1 >"$W/up.log" 2>&1 || fail "up did not start: $(tail -3 "$W/up.log")"
connected() { "$BIN/blendmq" --run-dir "$R" status 2>/dev/null | grep -q "blender connected"; }
wait_for 90 "Blender connected" connected

# 1. the version in status and status --json
line=$("$BIN/blendmq" --run-dir "$R" status 2>/dev/null | grep '^executor')
echo "$line" | grep -q "Blender $WANT)" || fail "status's executor line does not name Blender $WANT: $line"
"$BIN/blendmq" --run-dir "$R" status --json 2>/dev/null | grep -q "\"blender_version\":\"$WANT\"" ||
    fail "status --json has no blender_version $WANT"
ok "status: $line"

# 2. operators every version has: sandboxed
printf 'import bpy\nbpy.ops.mesh.primitive_cube_add(size=1.0)\nbpy.ops.object.shade_smooth()\n' > "$W/common.py"
"$BIN/blendmq" --run-dir "$R" --json script sandbox "$W/common.py" > "$W/common.out" 2>&1 ||
    fail "a script of common operators was not sandboxed on $WANT: $(head -c 600 "$W/common.out")"
grep -q '"status":"sandboxed"' "$W/common.out" || fail "no sandboxed status: $(head -c 600 "$W/common.out")"
ok "a cube and shade_smooth: sandboxed on Blender $WANT"

# 3. an operator only 3.4 has
printf 'import bpy\nbpy.ops.mesh.primitive_cube_add(size=1.0)\nbpy.ops.object.face_map_add()\n' > "$W/face_map.py"
"$BIN/blendmq" --run-dir "$R" --json script sandbox "$W/face_map.py" > "$W/face_map.out" 2>&1; rc=$?
case "$WANT" in
  3.*) [ $rc -eq 0 ] && grep -q '"status":"sandboxed"' "$W/face_map.out" ||
           fail "face_map_add on $WANT (which has it) was not sandboxed (exit $rc): $(head -c 600 "$W/face_map.out")"
       ok "face_map_add on Blender $WANT (it has face maps): sandboxed" ;;
  *)   [ $rc -ne 0 ] && grep -q '"status":"refused"' "$W/face_map.out" &&
           grep -q "Blender $WANT has no bpy.ops.object.face_map_add" "$W/face_map.out" ||
           fail "face_map_add on $WANT (which lacks it) was not refused by name (exit $rc): $(head -c 600 "$W/face_map.out")"
       grep -q '"sandbox"' "$W/face_map.out" && fail "a sandbox ran the refused script: $(head -c 600 "$W/face_map.out")"
       ok "face_map_add on Blender $WANT: $(grep -o '"message":"[^"]*' "$W/face_map.out" | head -1 | cut -c12-)" ;;
esac

"$BIN/blendmq" --run-dir "$R" down >/dev/null 2>&1
rm -rf "$W"
echo "all ok (Blender $WANT)"
