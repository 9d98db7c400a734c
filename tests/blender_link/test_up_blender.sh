#!/bin/bash
# `blendmq up`'s Blender (issues 23, 24), through the real stack:
#  1. BLENDMQ_BLENDER_PORT exported: `up` refuses it with a message naming it, and starts nothing;
#  2. an override `up` honours (BLENDMQ_BLENDER_HANG_KILL_MS) is in the files it wrote and in no
#     process's environment: the supervisor cleared it, so every process reads the same value;
#  3. the Blender is confined (bwrap) and serves a 0600 socket;
#  4. a Blender whose main thread stops (SIGSTOP: a blocked main thread) shows "blender busy" in
#     `status` and `status --json` within a few heartbeats; a plan sent meanwhile is answered
#     "still running", not "failed"; past blender.hang_kill_ms the supervisor kills it and starts
#     it again; `status` then says it answers.
# Usage: test_up_blender.sh BIN_DIR. Exit 77 without Blender or bubblewrap.
set -u
BIN=$1
command -v "${BLENDMQ_BLENDER:-blender}" >/dev/null || { echo "skipped: no Blender"; exit 77; }
bwrap --unshare-all --die-with-parent --ro-bind / / /bin/true 2>/dev/null || { echo "skipped: bubblewrap cannot run here"; exit 77; }
W=$(mktemp -d /tmp/bmq-upb-XXXXXX)
R=$W/run
mkdir -m 700 "$R"
fail() { echo "FAIL: $*"; "$BIN/blendmq" --run-dir "$R" status 2>&1 | sed 's/^/  status: /'; tail -5 "$R"/logs/executor.log "$R"/logs/supervisor.log 2>/dev/null; "$BIN/blendmq" --run-dir "$R" down >/dev/null 2>&1; rm -rf "$W"; exit 1; }
ok() { echo "ok    $*"; }
wait_for() {    # SECONDS DESCRIPTION COMMAND...
    local t=$1 what=$2; shift 2
    for _ in $(seq 1 $((t * 5))); do "$@" && return 0; sleep 0.2; done
    fail "$what (waited $t s)"
}

# 1. BLENDMQ_BLENDER_PORT
out=$(BLENDMQ_BLENDER_PORT=5555 "$BIN/blendmq" --run-dir "$R" up --ipc --validators 1 2>&1); rc=$?
[ $rc -eq 2 ] || fail "up with BLENDMQ_BLENDER_PORT exited $rc, not 2: $out"
echo "$out" | grep -q "BLENDMQ_BLENDER_PORT" || fail "the refusal does not name BLENDMQ_BLENDER_PORT: $out"
[ ! -e "$R/pids/supervisor.pid" ] || fail "up started a supervisor anyway"
ok "BLENDMQ_BLENDER_PORT refused: $out"

# 2. an override honoured: in the files, in no environment
BLENDMQ_BLENDER_HANG_KILL_MS=6000 "$BIN/blendmq" --run-dir "$R" up --ipc --validators 1 >/dev/null 2>&1 || fail "up did not start"
grep -q "hang_kill_ms: 6000" "$R/blendmq.yaml" || fail "blendmq.yaml lacks the override's value"
# (the supervisor's own /proc/PID/environ is what it was started with: it clears its environment
# before it starts anything, so every other process, Blender's bwrap included, is checked)
for p in $(cat $(ls "$R"/pids/*.pid | grep -v supervisor.pid)); do
    if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -q '^BLENDMQ_BLENDER_HANG_KILL_MS='; then
        fail "pid $p ($(cat /proc/$p/comm)) still has BLENDMQ_BLENDER_HANG_KILL_MS"
    fi
done
grep -q "override variable(s) cleared" "$R/logs/supervisor.log" || fail "the supervisor did not say it cleared the override"
ok "BLENDMQ_BLENDER_HANG_KILL_MS=6000: in blendmq.yaml, in no started process's environment"

# 3. confined, on a 0600 socket
SOCK=$R/blender-state/blender/link.sock
[ "$(stat -c %a "$SOCK")" = 600 ] || fail "$SOCK is not 0600"
BPID=$(cat "$R/pids/blender.pid")
tr '\0' ' ' < /proc/$BPID/cmdline | grep -q " blender-run " || fail "Blender (pid $BPID) is not started by blendmq blender-run"
pgrep -P "$BPID" -x bwrap >/dev/null || fail "Blender (pid $BPID) has no bwrap child"
inner() { for p in $(pgrep -x blender); do tr '\0' ' ' < /proc/$p/cmdline | grep -q -- "--socket $SOCK" && echo $p; done | head -1; }
wait_for 10 "the confined Blender process" test -n "$(inner)"
IN=$(inner)
"$BIN/blendmq" --run-dir "$R" status | grep -q "^blender .*confined" || fail "status does not say Blender is confined"
ok "Blender pid $IN under bwrap under blender-run pid $BPID, socket 0600, status says confined"

# 4. busy, then killed past hang_kill_ms and started again
busy_text() { "$BIN/blendmq" --run-dir "$R" status 2>/dev/null | grep -q "^blender *busy"; }
busy_json() { "$BIN/blendmq" --run-dir "$R" status --json 2>/dev/null | grep -q '"blender busy"'; }
connected() { "$BIN/blendmq" --run-dir "$R" status 2>/dev/null | grep -q "blender connected"; }
wait_for 30 "Blender connected" connected
# a long plan, stopped in its middle: its answer must say "still running", not "failed"
/usr/bin/python3 -c 'import json; print(json.dumps([{"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "name": "s%d" % i,
    "params": {"location": [i % 20, i // 20, 0]}} for i in range(200)]))' > "$W/plan.json"
"$BIN/blendmq" --run-dir "$R" --json plan run "$W/plan.json" > "$W/plan.out" 2>&1 &
PLAN=$!
started() { [ "$(grep -c '"ok"' "$W/plan.out" 2>/dev/null)" -ge 10 ]; }
wait_for 60 "the plan's first steps" started
kill -STOP "$IN"
T0=$(date +%s%N)
wait_for 15 "status says blender busy" busy_text
wait_for 5 "status --json says blender busy" busy_json
ok "busy after $(( ($(date +%s%N) - T0) / 1000000 )) ms, $(grep -c '"ok"' "$W/plan.out") steps in: $("$BIN/blendmq" --run-dir "$R" status | grep '^blender')"
killed() { grep -q '"hang_kills": *[1-9]' "$R/supervisor.json"; }
wait_for 30 "the supervisor kills the hung Blender" killed
ok "killed after $(( ($(date +%s%N) - T0) / 1000000 )) ms: $(grep -o 'has been busy[^:]*' "$R/logs/supervisor.log" | tail -1)"
wait_for 90 "Blender answers again after its restart" connected
wait $PLAN
grep -q "still running" "$W/plan.out" || fail "the plan's answer does not say still running: $(tail -2 "$W/plan.out" | cut -c1-400)"
grep -q '"status": *"failed"' "$W/plan.out" && fail "the plan's answer says failed: $(tail -2 "$W/plan.out" | cut -c1-400)"
ok "the plan's answer: $(grep -o 'still running[^(]*' "$W/plan.out" | head -1)"
ok "Blender restarted and connected ($(( ($(date +%s%N) - T0) / 1000000 )) ms after the stop)"
"$BIN/blendmq" --run-dir "$R" status | grep -q "^blender *busy" && fail "status still says busy"
"$BIN/blendmq" --run-dir "$R" down >/dev/null 2>&1
rm -rf "$W"
echo "PASS"
