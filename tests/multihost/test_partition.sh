#!/usr/bin/env bash
# multihost.partition (issue 17, "a partition between hosts"): network faults
# between the hosts of a CURVE stack under load, and what every client saw.
#
#   test_partition.sh SRC_DIR BIN_DIR
#
# Topology (one L2 segment, 10.78.0.0/24, bridge br0 in its own namespace; the
# set-up is tests/multihost/mh_lib.sh, shared with multihost.curve):
#
#   NS-gw      10.78.0.1   gateway (7700 front, 7701 events, 7702 validator broker)
#   NS-plan    10.78.0.2   planner (7703) + a validator
#   NS-exec    10.78.0.4   executor (7704, events 7705) + headless Blender (loopback)
#   NS-client  10.78.0.5   the load: `blendmq` CLIs
#   NS-audit   10.78.0.6   audit (7706)
#
# Load, from the client host, all the time: two plan loops (`plan run`, plans
# of 3 and 8 named cubes, every object named after its plan; faults 1 and 1b
# also cut a 150-step plan in the middle), a chat loop
# (offline planner), a scene-info loop, an audit-query loop (`audit list`,
# straight to the audit host), GET /api/audit through the gateway's HTTP API
# (curl on the gateway host; left out without curl), and 4 watchers (`watch`).
#
# Faults, one after the other, each after the stack is healthy again:
#   1. link down: the executor host's bridge port down for 8 s, then up (the
#      gateway, and everyone else, lose the executor: no FIN, no RST)
#   1b. only gateway <-> executor cut for 8 s (both bridge ports "isolated":
#      the executor still reaches the audit host, the gateway everyone else)
#   2. loss 30% and delay 200 ms ±50 ms (tc netem) on the executor host's link,
#      both ways, for 15 s; skipped with a message when the kernel has no sch_netem
#   3. the audit host's bridge port down for 10 s, then up
# After each, checked:
#   a. every client got an answer within the bound: a call overlapping the fault
#      lasts at most BOUND. For a hard partition BOUND_HARD_MS = liveness ×
#      interval + 2 × interval (the peer is declared dead, then the waiting
#      request is answered within two intervals) + 2 s for the CLI's own start,
#      handshake and the work = 3×1000 + 2×1000 + 2000 = 7000 ms. Under loss and
#      delay BOUND_LOSSY_MS = 30000 ms: done or a clear error, never a hang.
#      Any call's answer is an outcome: done / ok, or an error code with a message.
#   b. no audit record lost: every request the gateway accepted (each cid a
#      plan or chat call printed) has its `request` and `request.end` records,
#      and every sender instance's records have seq 1..N without a gap (records
#      spool at the sender and arrive after the heal), within 20 s of the heal
#   c. the scene whole or rolled back: each plan's named objects all or none
#      (the loops are paused while the scene is read, so nothing is in flight),
#      and as the client was told: none of a plan's objects left when its
#      answer said it was rolled back, all of them when it said done
#   d. healthy again within 20 s of the heal: `status` all alive, Blender
#      connected, 1 validator, and a probe plan done; the watchers still run and
#      saw the probe's events
# Prints the table: fault × what the client saw × time to answer × time to heal
# × scene state. MH_KEEP=1 keeps the work dir.
# Exit 0 pass, 1 fail, 77 skipped (not root, or a tool is missing).
set -uo pipefail
SRC="${1:?SRC_DIR}"; BIN="${2:?BIN_DIR}"
CURVE=true
SUBNET=10.78.0
MH_PREFIX=bmqpt
MH_TAIL_SKIP="watch-*"
# shellcheck source=mh_lib.sh
source "$(dirname "$0")/mh_lib.sh"

NS_GW="$ID-gw"; NS_PL="$ID-plan"; NS_EX="$ID-exec"; NS_CL="$ID-client"; NS_AU="$ID-audit"
ALL_NS=("$NS_GW" "$NS_PL" "$NS_EX" "$NS_CL" "$NS_AU" "$NS_BR")
GW_IP=$SUBNET.1; PLANNER_IP=$SUBNET.2; EXEC_IP=$SUBNET.4; AUDIT_IP=$SUBNET.6

INTERVAL_MS=1000; LIVENESS=3                          # heartbeat defaults (deploy/blendmq.yaml)
BOUND_HARD_MS=$(( LIVENESS * INTERVAL_MS + 2 * INTERVAL_MS + 2000 ))
BOUND_LOSSY_MS=30000
HEAL_S=20
HANG_KILL_S=90                                        # a call still running by then is killed: a hang
PLAN_A=3; PLAN_B=8                                    # objects per plan of loop A and B
PLAN_LONG=150                                         # the long plan a fault cuts in the middle
long_seq=0

MH_TOOLS="ip tc bridge blender"                       # iproute2 and Blender
mh_require blendmq blendmq-gateway blendmq-planner blendmq-validator blendmq-executor blendmq-audit
mh_sweep_stale
mh_workdir partition
mkdir -p "$WORK/calls" "$WORK/inflight"

# ---------------------------------------------------------------- set-up
mh_net_up <<EOF
$NS_GW $SUBNET.1 p-gw
$NS_PL $SUBNET.2 p-plan
$NS_EX $SUBNET.4 p-exec
$NS_CL $SUBNET.5 p-client
$NS_AU $SUBNET.6 p-audit
EOF
mh_keys_init
host_keys gw gateway;             cp -a "$WORK/keys-master"/*.token "$WORK/gw/keys/"
host_keys audit audit
host_keys plan planner validator; cp -a "$WORK/keys-master/verdict.key" "$WORK/plan/keys/"
host_keys exec executor;          cp -a "$WORK/keys-master/verdict.key" "$WORK/keys-master/blender.token" "$WORK/exec/keys/"
host_keys client cli
for h in gw audit plan exec client; do host_config "$h"; done

start_blender "$NS_EX" exec
svc "$NS_AU" audit audit
svc "$NS_PL" plan planner
svc "$NS_EX" exec executor executor BLENDMQ_BLENDER_PORT="$BLENDER_PORT"
svc "$NS_GW" gw gateway
svc "$NS_PL" plan validator validator
wait_for 60 stack_healthy 1 || die "the stack did not become healthy over tcp (last status: $(cat "$WORK/status.json" 2>/dev/null))"
log "stack healthy over CURVE tcp: gateway $GW_IP, planner+validator $PLANNER_IP, executor+Blender $EXEC_IP, audit $AUDIT_IP"
HTTP_URL=$(grep -o '"http":"http://127.0.0.1:[0-9]*"' "$WORK/status.json" | head -1 | cut -d'"' -f4)
if ! command -v curl >/dev/null; then HTTP_URL=""; log "curl is not installed: no HTTP /api/audit loop"
elif [ -z "$HTTP_URL" ]; then log "the gateway reports no HTTP endpoint: no HTTP /api/audit loop"; fi

# ---------------------------------------------------------------- the load
# one call: a line in calls.log   LOOP SEQ START_MS END_MS RC CID OUTCOME
# OUTCOME: done | ok | the error code (the gateway's, or the CLI's own) | hung
outcome_of () {   # outcome_of BASE RC
    local base="$1" rc="$2" last code
    last=$(grep '^{"type":"' "$base.out" 2>/dev/null | tail -1)
    if [ "$rc" = 137 ] || [ "$rc" = 124 ]; then echo hung; return; fi
    case "$last" in
        *'"type":"execute.result"'*) grep -o '"status":"[a-z_]*"' <<<"$last" | head -1 | cut -d'"' -f4; return;;
        *'"type":"error"'*) grep -o '"code":"[a-z_]*"' <<<"$last" | head -1 | cut -d'"' -f4; return;;
        *'"type":"validate.reply"'*'"accepted":false'*) echo rejected; return;;
    esac
    [ "$rc" = 0 ] && { echo ok; return; }
    code=$(grep -o -m1 '^blendmq: [a-z_]*:' "$base.err" | cut -d' ' -f2 | tr -d ':')
    [ -n "$code" ] && { echo "$code"; return; }
    # the CLI's own messages ("gateway unavailable", "no answer from the audit service")
    code=$(head -1 "$base.err" | sed 's/^blendmq: //' | cut -d' ' -f1-6 | tr -c 'a-z0-9\n' '_')
    echo "cli:${code:-exit$rc}"
}
# the message a client saw for a non-ok outcome (for the table's notes)
message_of () {
    local base="$1" m
    m=$(grep '"type":"error"' "$base.out" 2>/dev/null | tail -1 | grep -o '"message":"[^"]*"' | cut -d'"' -f4)
    [ -n "$m" ] || m=$(grep '"type":"execute.result"' "$base.out" 2>/dev/null | tail -1 | grep -o '"error":"[^"]*"' | cut -d'"' -f4)
    [ -n "$m" ] || m=$(head -1 "$base.err" 2>/dev/null)
    echo "${m:0:220}"
}

call () {   # call LOOP SEQ CLI-ARGS...
    local loop="$1" seq="$2"; shift 2
    local base="$WORK/calls/$loop.$seq" t0 t1 rc cid
    t0=$(now_ms)
    echo "$t0" >"$WORK/inflight/$loop"
    timeout -s KILL "$HANG_KILL_S" ip netns exec "$NS_CL" "$BIN/blendmq" --config "$WORK/client/blendmq.yaml" "$@" \
        >"$base.out" 2>"$base.err"
    rc=$?
    t1=$(now_ms)
    cid=$(grep -o -m1 '"cid":"[0-9A-Fa-f]*"' "$base.out" | head -1 | cut -d'"' -f4)
    echo "$loop $seq $t0 $t1 $rc ${cid:--} $(outcome_of "$base" "$rc")" >>"$WORK/calls.log"
    rm -f "$WORK/inflight/$loop"
}

# loops pause (between calls) while $WORK/pause exists
paused () { while [ -e "$WORK/pause" ]; do sleep 0.1; done; }

plan_file () {   # plan_file LOOP SEQ N: N cubes named LOOP SEQ x K
    local loop="$1" seq="$2" n="$3" k sep=""
    printf '['
    for k in $(seq 1 "$n"); do
        printf '%s{"operation":"bpy.ops.mesh.primitive_cube_add","name":"%s%dx%d","params":{"location":[%d,%d,0]}}' \
            "$sep" "$loop" "$seq" "$k" "$k" "$seq"
        sep=,
    done
    printf ']\n'
}

plan_loop () {   # plan_loop LOOP N
    local loop="$1" n="$2" seq=0
    while :; do
        paused; seq=$((seq + 1))
        plan_file "$loop" "$seq" "$n" >"$WORK/calls/$loop.$seq.json"
        call "$loop" "$seq" --json plan run "$WORK/calls/$loop.$seq.json"
        sleep 0.4
    done
}
PROMPTS=("a table" "a lamp" "a mug" "a stool" "a candle" "a donut" "a cactus" "a flower")
chat_loop () {
    local seq=0
    while :; do paused; seq=$((seq + 1)); call C "$seq" --json chat "${PROMPTS[$((seq % ${#PROMPTS[@]}))]}"; sleep 1; done
}
scene_loop () {
    local seq=0
    while :; do paused; seq=$((seq + 1)); call S "$seq" --json scene info; sleep 1; done
}
audit_loop () {
    local seq=0
    while :; do paused; seq=$((seq + 1)); call Q "$seq" --json audit list --since 1m --limit 5; sleep 1.5; done
}

# the gateway's HTTP API, from the gateway host (it binds 127.0.0.1): GET
# /api/audit, which the gateway forwards to the audit host. OUTCOME: ok (200)
# or the error's code (its JSON body), "http000" when curl got no answer.
call_http () {   # call_http SEQ
    local seq="$1" base="$WORK/calls/H.$1" t0 t1 code outcome
    t0=$(now_ms)
    echo "$t0" >"$WORK/inflight/H"
    code=$(nsx "$NS_GW" curl -s -m "$HANG_KILL_S" -o "$base.out" -w '%{http_code}' \
               -H "Authorization: Bearer $(cat "$WORK/gw/keys/cli.token")" "$HTTP_URL/api/audit?limit=5" 2>"$base.err")
    t1=$(now_ms)
    if [ "$code" = 200 ]; then outcome=ok
    else
        outcome=$(grep -o '"code":"[a-z_]*"' "$base.out" 2>/dev/null | head -1 | cut -d'"' -f4)
        [ -n "$outcome" ] || outcome="http$code"
        grep -o '"message":"[^"]*"' "$base.out" 2>/dev/null | head -1 | cut -d'"' -f4 >"$base.err"
    fi
    echo "H $seq $t0 $t1 $code - $outcome" >>"$WORK/calls.log"
    rm -f "$WORK/inflight/H"
}
http_loop () {
    local seq=0
    while :; do paused; seq=$((seq + 1)); call_http "$seq"; sleep 1.5; done
}

LOOP_PIDS=()
load_start () {
    plan_loop A "$PLAN_A" & LOOP_PIDS+=("$!")
    plan_loop B "$PLAN_B" & LOOP_PIDS+=("$!")
    chat_loop & LOOP_PIDS+=("$!")
    scene_loop & LOOP_PIDS+=("$!")
    audit_loop & LOOP_PIDS+=("$!")
    if [ -n "$HTTP_URL" ]; then http_loop & LOOP_PIDS+=("$!"); fi
    PIDS+=("${LOOP_PIDS[@]}")
    local w
    for w in 1 2 3 4; do start "$NS_CL" "watch-$w" "$BIN/blendmq" --config "$WORK/client/blendmq.yaml" --json watch; done
}
# pause the loops and wait until no call is in flight (a hung call ends at HANG_KILL_S)
load_pause () {
    touch "$WORK/pause"
    local end=$(( $(date +%s) + HANG_KILL_S + 5 ))
    while [ -n "$(ls "$WORK/inflight")" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.1; done
}
load_resume () { rm -f "$WORK/pause"; }

# ---------------------------------------------------------------- checks
# the calls.log lines of calls that ended after FROM_MS and started before TO_MS
calls_between () { awk -v a="$1" -v b="$2" '$4 >= a && $3 <= b' "$WORK/calls.log"; }

probe_seq=0
probe_ok () {   # a probe plan runs to the end, and the watchers see it
    probe_seq=$((probe_seq + 1))
    plan_file P "$probe_seq" 2 >"$WORK/probe.json"
    cli --json plan run "$WORK/probe.json" 2>/dev/null | grep -q '"type":"execute.result".*"status":"done"'
}
healthy () { stack_healthy 1 && probe_ok; }

# HEAL_MS: time from HEAL (ms) until healthy (status and a probe plan); empty when not within HEAL_S
wait_healthy () {
    local heal="$1"
    HEAL_MS=""
    if wait_for "$HEAL_S" healthy; then HEAL_MS=$(( $(now_ms) - heal )); fi
}

# b. the audit trail: every cid of the plan and chat calls in LINES has request
# and request.end; every instance's seq runs 1..N. Sets AUDIT_NOTE; 0 / 1.
audit_complete () {
    local lines="$1" export_file="$WORK/audit-export.jsonl" cid missing=0 total=0
    cli --json audit export --format jsonl >"$export_file" 2>"$WORK/audit-export.err" || { AUDIT_NOTE="audit export failed: $(head -1 "$WORK/audit-export.err")"; return 1; }
    grep -o '"cid":"[0-9A-Fa-f]*","kind":"request[.a-z]*"' "$export_file" | sed 's/"cid":"\([^"]*\)","kind":"\([^"]*\)"/\1 \2/' | sort -u >"$WORK/audit-kinds"
    MISSING_CIDS=()
    for cid in $(awk '($1 == "A" || $1 == "B" || $1 == "C" || $1 == "L") && $6 != "-" { print $6 }' <<<"$lines"); do
        total=$((total + 1))
        if ! grep -q "^$cid request$" "$WORK/audit-kinds" || ! grep -q "^$cid request.end$" "$WORK/audit-kinds"; then
            missing=$((missing + 1)); MISSING_CIDS+=("$cid")
        fi
    done
    # per sender instance: seq 1..N, no gap
    local gaps
    gaps=$(sed -n 's/.*"seq":\([0-9]*\),"data".*"instance":"\([^"]*\)"}$/\2 \1/p' "$export_file" | sort -u |
           awk '{ n[$1]++; if ($2 > m[$1]) m[$1] = $2 } END { for (i in n) if (n[i] != m[i]) printf "%s has %d of seq 1..%d; ", i, n[i], m[i] }')
    AUDIT_NOTE="$((total - missing))/$total stories with request+request.end; $(wc -l <"$export_file") records${gaps:+; gaps: $gaps}"
    [ "$missing" = 0 ] && [ -z "$gaps" ]
}
wait_audit () {   # wait_audit LINES HEAL_MS: AUDIT_MS, from the heal until the trail is complete; empty if not in HEAL_S
    local lines="$1" heal="$2" end=$(( $(date +%s) + HEAL_S ))
    AUDIT_MS=""
    while :; do
        if audit_complete "$lines"; then AUDIT_MS=$(( $(now_ms) - heal )); return; fi
        [ "$(date +%s)" -ge "$end" ] && return
        sleep 1
    done
}

# c. each plan of loops A, B and L in LINES: its objects all or none; and what the
# client was told agrees with the scene (told "rolled back": none of them left).
# Sets SCENE_NOTE and SCENE_BAD (the plans that break a rule); 0 / 1.
scene_check () {
    local lines="$1" scene loop seq rc cid outcome n have whole=0 none=0 late=0
    SCENE_BAD=()
    scene=$(cli --json scene info 2>"$WORK/scene.err") || { SCENE_NOTE="scene info failed: $(head -1 "$WORK/scene.err")"; return 1; }
    echo "$scene" >"$WORK/scene.json"
    [ "$(jnum count <<<"$scene")" -le 1000 ] || { SCENE_NOTE="more than 1000 objects: scene info does not list them all"; return 1; }
    while read -r loop seq _ _ rc cid outcome; do
        n=$(grep -o '"operation"' "$WORK/calls/$loop.$seq.json" | wc -l)
        have=$(grep -o "\"name\":\"$loop${seq}x[0-9]*\"" <<<"$scene" | sort -u | wc -l)
        if [ "$have" = "$n" ]; then
            whole=$((whole + 1))
            [ "$outcome" = done ] || late=$((late + 1))
        elif [ "$have" = 0 ]; then
            none=$((none + 1))
            [ "$outcome" = done ] && SCENE_BAD+=("$loop$seq: the client saw done, its objects are gone")
        else SCENE_BAD+=("$loop$seq: PARTIAL $have/$n objects, the client saw $outcome")
        fi
        if [ "$have" != 0 ] && [ "$outcome" != done ] && message_of "$WORK/calls/$loop.$seq" | grep -q 'ends whole if'; then
            # told "whole if it finished before losing us, else rolled back": the story must say which
            grep "\"cid\":\"$cid\"" "$WORK/audit-export.jsonl" 2>/dev/null | grep '"kind":"plan.end"' | grep -q '"status":"done"' \
                || SCENE_BAD+=("$loop$seq: $have/$n objects in the scene, but its story has no plan.end done")
        elif [ "$have" != 0 ] && [ "$outcome" != done ] && message_of "$WORK/calls/$loop.$seq" | grep -q 'roll'; then
            SCENE_BAD+=("$loop$seq: $have/$n objects in the scene, but the client was told: $(message_of "$WORK/calls/$loop.$seq" | cut -c1-150)")
        fi
    done < <(awk '$1 == "A" || $1 == "B" || $1 == "L"' <<<"$lines")
    SCENE_NOTE="$whole whole, $none none"
    [ "$late" = 0 ] || SCENE_NOTE="$SCENE_NOTE ($late whole although the client saw an error)"
    [ ${#SCENE_BAD[@]} = 0 ] || SCENE_NOTE="$SCENE_NOTE; ${#SCENE_BAD[@]} WRONG"
    [ ${#SCENE_BAD[@]} = 0 ]
}

# what the clients saw: per loop, outcome counts ("plan: 12 done, 3 executor_unavailable")
seen_summary () {
    awk '{ k = ($1 == "A" || $1 == "B" || $1 == "L") ? "plan" : ($1 == "C") ? "chat" : ($1 == "S") ? "scene" : ($1 == "H") ? "http-audit" : "audit"; c[k " " $7]++ }
         END { for (x in c) { split(x, p, " "); s[p[1]] = s[p[1]] (s[p[1]] ? ", " : "") c[x] " " p[2] } 
               n = split("plan chat scene audit http-audit", order, " ")
               for (i = 1; i <= n; i++) if (order[i] in s) printf "%s%s: %s", (o++ ? "; " : ""), order[i], s[order[i]] }' <<<"$1"
}

watchers_ok () {   # every watcher runs and saw the last probe plan
    local w
    for w in 1 2 3 4; do
        local pid_var="PID_watch_$w"
        kill -0 "${!pid_var}" 2>/dev/null || { WATCH_NOTE="watcher $w exited: $(tail -1 "$WORK/logs/watch-$w.log")"; return 1; }
        grep -q "\"P${probe_seq}x1\"" "$WORK/logs/watch-$w.log" || { WATCH_NOTE="watcher $w did not see probe plan P$probe_seq"; return 1; }
    done
    WATCH_NOTE="4/4 watchers running, saw the probe"
}

ROWS=()
MISSING_CIDS=()
SCENE_BAD=()
NOTES=()
# run_fault NAME BOUND_MS INJECT HEAL HOLD_S: inject, hold, heal; then the checks a–d
# MIDPLAN=1: the fault comes while a long plan (loop L) is between its steps
run_fault () {
    local name="$1" bound="$2" inject="$3" heal_fn="$4" hold="$5" midplan="${6:-0}"
    load_pause
    cli scene reset >/dev/null 2>&1 || fail "$name: scene reset failed"
    local phase_start; phase_start=$(now_ms)
    load_resume
    sleep 4                                           # load running before the fault
    local long_pid=""
    if [ "$midplan" = 1 ]; then
        long_seq=$((long_seq + 1))
        plan_file L "$long_seq" "$PLAN_LONG" >"$WORK/calls/L.$long_seq.json"
        call L "$long_seq" --json plan run "$WORK/calls/L.$long_seq.json" &
        long_pid=$!
        # (the CLI's --json output is buffered: a watcher's is not)
        wait_for 20 grep -q "\"object\":\"L${long_seq}x5\"" "$WORK/logs/watch-1.log" \
            || log "$name: the long plan L$long_seq did not reach step 5 in 20 s: the fault comes anyway"
    fi
    local t_fault t_heal
    t_fault=$(now_ms)
    if ! "$inject"; then
        [ -z "$long_pid" ] || wait "$long_pid"
        ROWS+=("$name|skipped: $INJECT_NOTE|-|-|-")
        SKIPPED_FAULTS+=("$name: $INJECT_NOTE")
        log "SKIP: $name: $INJECT_NOTE"
        return
    fi
    log "$name: injected${long_pid:+ (the long plan L$long_seq at step $(grep -o "\"object\":\"L${long_seq}x[0-9]*\"" "$WORK/logs/watch-1.log" | tail -1 | grep -o '[0-9]*"$' | tr -d '"') of $PLAN_LONG, as a watcher saw)}"
    sleep "$hold"
    "$heal_fn"
    t_heal=$(now_ms)
    log "$name: healed after $(( (t_heal - t_fault) / 1000 )) s"
    wait_healthy "$t_heal"
    local heal_ms="$HEAL_MS"
    [ -n "$heal_ms" ] && pass "$name: healthy again $heal_ms ms after the heal (status + a probe plan)" \
        || fail "$name: not healthy within $HEAL_S s of the heal (status: $(cat "$WORK/status.json" 2>/dev/null | head -c 600))"
    sleep 2                                           # the load runs on the healed stack a little
    load_pause
    [ -z "$long_pid" ] || wait "$long_pid"
    local t_end; t_end=$(now_ms)
    local lines during
    lines=$(calls_between "$phase_start" "$t_end")
    during=$(calls_between "$t_fault" "$(( t_heal + ${heal_ms:-$((HEAL_S * 1000))} ))")
    # a. every client answered within the bound
    local worst over n_during hung
    worst=$(awk 'BEGIN { m = 0 } { d = $4 - $3; if (d > m) m = d } END { print m }' <<<"$during")
    over=$(awk -v b="$bound" '$4 - $3 > b { printf "%s%s: %d ms (%s); ", $1, $2, $4 - $3, $7 }' <<<"$during")
    hung=$(awk '$7 == "hung" || $7 == "timeout"' <<<"$lines" | wc -l)
    n_during=$(grep -c . <<<"$during")
    if [ -z "$over" ] && [ "$hung" = 0 ] && [ "$n_during" -gt 0 ]; then
        pass "$name: $n_during calls overlapped the fault; every one answered within $bound ms (slowest $worst ms)"
    else fail "$name: answers over the bound of $bound ms: ${over:-none}; hung or timed out: $hung; calls: $n_during"; fi
    local m
    while read -r loop seq _ _ _ _ outcome; do
        [ -n "$loop" ] || continue
        case "$outcome" in done|ok) continue;; esac
        m=$(message_of "$WORK/calls/$loop.$seq")
        NOTES+=("$name | $loop$seq $outcome: $m")
        [ -n "$m" ] || fail "$name: $loop$seq answered $outcome without a message"
    done < <(awk '!seen[$7]++' <<<"$during")
    # b. the audit trail
    wait_audit "$lines" "$t_heal"
    local audit_ms="$AUDIT_MS"
    [ -n "$audit_ms" ] && pass "$name: no audit record lost: $AUDIT_NOTE (checked complete $audit_ms ms after the heal)" \
        || fail "$name: audit records lost or late (> $HEAL_S s after the heal): $AUDIT_NOTE; missing: ${MISSING_CIDS[*]:0:5}"
    # c. the scene
    if scene_check "$lines"; then pass "$name: scene whole or rolled back, as the clients were told: $SCENE_NOTE"
    else fail "$name: scene: $SCENE_NOTE"; local b; for b in "${SCENE_BAD[@]:0:5}"; do log "      $b"; done; fi
    # d. the watchers
    watchers_ok && pass "$name: $WATCH_NOTE" || fail "$name: $WATCH_NOTE"
    local first_err heal_col="NOT within $HEAL_S s"
    [ -n "$heal_ms" ] && heal_col="$heal_ms ms"
    first_err=$(awk -v f="$t_fault" '$7 != "done" && $7 != "ok" && $4 >= f { d = $4 - f; if (m == "" || d < m) m = d } END { print m }' <<<"$during")
    ROWS+=("$name|$(seen_summary "$during")|max ${worst} ms (bound $bound)${first_err:+; first error +$first_err ms after the fault}|$heal_col|$SCENE_NOTE")
    load_resume
}

# ---------------------------------------------------------------- the faults
exec_link_down () { ip -n "$NS_BR" link set p-exec down; }
exec_link_up ()   { ip -n "$NS_BR" link set p-exec up; }
# isolated bridge ports reach the others but not each other: only gateway <-> executor is cut
gw_exec_cut () { bridge -n "$NS_BR" link set dev p-gw isolated on && bridge -n "$NS_BR" link set dev p-exec isolated on \
                     || { INJECT_NOTE="bridge port isolation is not supported here"; gw_exec_join; return 1; }; }
gw_exec_join () { bridge -n "$NS_BR" link set dev p-gw isolated off; bridge -n "$NS_BR" link set dev p-exec isolated off; return 0; }
audit_link_down () { ip -n "$NS_BR" link set p-audit down; }
audit_link_up ()   { ip -n "$NS_BR" link set p-audit up; }
NETEM="loss 30% delay 200ms 50ms"
exec_netem_on () {
    local err
    if ! err=$(ip netns exec "$NS_BR" tc qdisc add dev p-exec root netem $NETEM 2>&1); then
        INJECT_NOTE="tc qdisc add … netem failed (${err//$'\n'/ }): no sch_netem in this kernel"
        return 1
    fi
    ip netns exec "$NS_EX" tc qdisc add dev eth0 root netem $NETEM || { INJECT_NOTE="netem on the executor's eth0 failed"; exec_netem_off; return 1; }
}
exec_netem_off () {
    ip netns exec "$NS_BR" tc qdisc del dev p-exec root 2>/dev/null
    ip netns exec "$NS_EX" tc qdisc del dev eth0 root 2>/dev/null
    return 0
}

# ---------------------------------------------------------------- main
load_start
sleep 5
load_pause
base=$(cat "$WORK/calls.log" 2>/dev/null)
bad=$(awk '$7 != "done" && $7 != "ok"' <<<"$base")
[ -n "$base" ] && [ -z "$bad" ] && pass "baseline: $(grep -c . <<<"$base") calls before any fault, all answered well ($(seen_summary "$base"))" \
    || fail "baseline: calls failed before any fault: $(head -3 <<<"$bad")"
load_resume

SKIPPED_FAULTS=()
# PARTITION_CASES picks the faults (ctest runs netem as its own test, multihost.netem,
# so a kernel without sch_netem skips that test alone instead of hiding the others)
cases=",${PARTITION_CASES:-link,cut,netem,audit},"
wants () { [[ "$cases" == *",$1,"* ]]; }
if wants link; then run_fault "1. executor host link down 8 s" "$BOUND_HARD_MS" exec_link_down exec_link_up 8 1; fi
if wants cut; then run_fault "1b. gateway-executor cut only, 8 s" "$BOUND_HARD_MS" gw_exec_cut gw_exec_join 8 1; fi
if wants netem; then run_fault "2. executor link loss 30% + delay 200±50 ms, 15 s" "$BOUND_LOSSY_MS" exec_netem_on exec_netem_off 15; fi
if wants audit; then run_fault "3. audit host link down 10 s" "$BOUND_HARD_MS" audit_link_down audit_link_up 10; fi
load_pause

echo
echo "fault | what the client saw (calls overlapping the fault, until healthy) | time to answer | time to heal | scene state"
echo "----- | ---------------------------------------------------------------- | -------------- | ------------ | -----------"
for r in "${ROWS[@]}"; do echo "${r//|/ | }"; done
if [ ${#NOTES[@]} -gt 0 ]; then
    echo
    echo "messages the clients saw (one per fault and outcome):"
    for n in "${NOTES[@]}"; do echo "  $n"; done
fi
echo
# a fault this kernel could not inject is not a pass: the test reads as skipped (77)
if [ $fails = 0 ] && [ ${#SKIPPED_FAULTS[@]} -gt 0 ]; then
    log "SKIPPED: ${#SKIPPED_FAULTS[@]} fault(s) not injected (the others passed): $(IFS=';'; echo "${SKIPPED_FAULTS[*]}")"
    exit 77
fi
log "$([ $fails = 0 ] && echo PASSED || echo "FAILED ($fails)") in $(elapsed) s"
[ $fails = 0 ]
