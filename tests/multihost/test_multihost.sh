#!/usr/bin/env bash
# multihost.curve (issue 12, "A multi-host test"): blendmq spread over network
# namespaces that this script makes, every hop over tcp:// with CURVE.
#
#   test_multihost.sh SRC_DIR BIN_DIR
#
# Topology (one L2 segment, 10.77.0.0/24, bridge br0 in its own namespace):
#
#   NS-br      br0 (no address; tcpdump captures here)
#   NS-gw      10.77.0.1   gateway (7700 front, 7701 events, 7702 validator broker) + audit (7706)
#   NS-val1    10.77.0.2   planner (7703) + validator 1
#   NS-val2    10.77.0.3   validator 2                  <- torn down under load
#   NS-exec    10.77.0.4   executor (7704, events 7705) + headless Blender (loopback only)
#   NS-client  10.77.0.5   the `blendmq` CLI
#   NS-intr    10.77.0.66  an intruder: no keys at all
#
# Each host gets its own keys dir holding everyone's public certs and only its
# own secret keys (the README's "Across machines" distribution).
# Checks: 1. a plan runs end to end; 2. a validator host is torn down while 30
# validations are in flight, and every one is answered; 3. the intruder gets no
# handshake and no answer from any endpoint (plain ZeroMQ and an untrusted CURVE
# key), and each server logs the refusal; 4. the bridge capture has TCP traffic
# to the gateway but not the prompt's marker word.
# MH_CURVE=false runs the same with security.curve false: checks 3 and 4 must
# then fail (a control that the test detects a bus without CURVE).
# MH_KEEP=1 keeps the work dir (logs, configs, bridge.pcap); MH_STOP=SECONDS
# stops after the stack is healthy and holds it that long, for debugging.
# Exit 0 pass, 1 fail, 77 skipped (not root, or a tool is missing).
set -uo pipefail
SRC="${1:?SRC_DIR}"; BIN="${2:?BIN_DIR}"
CURVE="${MH_CURVE:-true}"
MARKER="snowman-zx91"
PROMPT="build a snowman $MARKER"
SUBNET=10.77.0
MH_PREFIX=bmqmh
# shellcheck source=mh_lib.sh
source "$(dirname "$0")/mh_lib.sh"

NS_GW="$ID-gw"; NS_V1="$ID-val1"; NS_V2="$ID-val2"
NS_EX="$ID-exec"; NS_CL="$ID-client"; NS_IN="$ID-intr"
ALL_NS=("$NS_GW" "$NS_V1" "$NS_V2" "$NS_EX" "$NS_CL" "$NS_IN" "$NS_BR")
GW_IP=$SUBNET.1; PLANNER_IP=$SUBNET.2; EXEC_IP=$SUBNET.4; AUDIT_IP=$SUBNET.1

mh_require blendmq blendmq-gateway blendmq-planner blendmq-validator blendmq-executor blendmq-audit mh_intruder
mh_sweep_stale
mh_workdir multihost

# ---------------------------------------------------------------- network
net_up () {
    mh_net_up <<EOF
$NS_GW $SUBNET.1 p-gw
$NS_V1 $SUBNET.2 p-val1
$NS_V2 $SUBNET.3 p-val2
$NS_EX $SUBNET.4 p-exec
$NS_CL $SUBNET.5 p-client
$NS_IN $SUBNET.66 p-intr
EOF
}

# ---------------------------------------------------------------- keys and config
keys_and_configs () {
    mh_keys_init
    host_keys gw gateway audit;      cp -a "$WORK/keys-master"/*.token "$WORK/gw/keys/"   # HTTP tokens → roles
    host_keys val1 planner validator; cp -a "$WORK/keys-master/verdict.key" "$WORK/val1/keys/"
    host_keys val2 validator;         cp -a "$WORK/keys-master/verdict.key" "$WORK/val2/keys/"
    host_keys exec executor;          cp -a "$WORK/keys-master/verdict.key" "$WORK/keys-master/blender.token" "$WORK/exec/keys/"
    host_keys client cli
    for h in gw val1 val2 exec client; do host_config "$h"; done
    log "keys: $(ls "$WORK/keys-master"/*.cert | wc -l) keypairs made by 'blendmq keys init'; security.curve=$CURVE"
}

# ---------------------------------------------------------------- services
validators_in_pool () { cli --json status 2>/dev/null | jnum workers; }
pool_is () { [ "$(validators_in_pool)" = "$1" ]; }

services_up () {
    start_blender "$NS_EX" exec
    svc "$NS_GW" gw audit
    svc "$NS_V1" val1 planner
    svc "$NS_EX" exec executor executor BLENDMQ_BLENDER_PORT="$BLENDER_PORT"
    svc "$NS_GW" gw gateway
    svc "$NS_V1" val1 validator validator-1
    svc "$NS_V2" val2 validator validator-2
    wait_for 60 stack_healthy 2 || die "the stack did not become healthy over tcp (last status: $(cat "$WORK/status.json" 2>/dev/null))"
    log "stack healthy: every service alive, Blender connected, 2 validators in the pool"
}

# ---------------------------------------------------------------- checks
capture_start () {
    start "$NS_BR" tcpdump tcpdump -i br0 --immediate-mode -U -s 0 -Z root -w "$WORK/bridge.pcap" tcp
    wait_for 10 grep -q "listening on br0" "$WORK/logs/tcpdump.log" || die "tcpdump did not start on br0"
}
capture_stop () {
    kill -INT "$PID_tcpdump" 2>/dev/null
    wait "$PID_tcpdump" 2>/dev/null
}

# 1. a plan runs end to end over CURVE tcp: the CLI on the client host, the
#    planner, a validator, the executor and Blender each on another host
check_plan () {
    # meanwhile, the intruder subscribes to both PUB endpoints (progress is flowing)
    nsx "$NS_IN" "$BIN/mh_intruder" sub "tcp://$SUBNET.1:7701" 5000 >"$WORK/intr-sub-gw.out" 2>&1 &
    local sub1=$!
    nsx "$NS_IN" "$BIN/mh_intruder" sub "tcp://$SUBNET.4:7705" 5000 >"$WORK/intr-sub-exec.out" 2>&1 &
    local sub2=$!
    sleep 1
    cli --json chat "$PROMPT" >"$WORK/chat.jsonl" 2>"$WORK/chat.err"
    local rc=$?
    # the last line is the execute.result: {"status":"done", "steps_done", "steps_total", "objects"}
    local result total done_steps ok_steps
    result=$(grep '"type":"execute.result"' "$WORK/chat.jsonl" | tail -1)
    total=$(jnum steps_total <<<"$result"); done_steps=$(jnum steps_done <<<"$result")
    ok_steps=$(grep '"type":"progress"' "$WORK/chat.jsonl" | grep '"event":"step"' | grep -c '"status":"ok"')
    if [ $rc = 0 ] && [[ "$result" == *'"status":"done"'* ]] && [ "${total:-0}" -gt 0 ] \
       && [ "$done_steps" = "$total" ] && [ "$ok_steps" = "$total" ]; then
        pass "1. plan over tcp (security.curve $CURVE): chat \"$PROMPT\" from $NS_CL: status done, $done_steps/$total steps, $ok_steps step events ok"
    else
        fail "1. chat \"$PROMPT\": exit $rc, steps $done_steps/$total, $ok_steps ok step events: $(tail -c 400 "$WORK/chat.err") ${result:-$(tail -n 2 "$WORK/chat.jsonl")}"
    fi
    # the objects the plan reports exist in the live scene of the Blender in NS-exec
    local scene names missing=()
    scene=$(cli --json scene info 2>/dev/null)
    names=$(grep -o '"objects":\[[^]]*\]' <<<"$result" | head -1 | grep -o '"[A-Za-z0-9_.]*"' | grep -v '^"objects"$' | tr -d '"')
    for n in $names; do [[ "$scene" == *"\"name\":\"$n\""* ]] || missing+=("$n"); done
    if [ -n "$names" ] && [ ${#missing[@]} = 0 ]; then
        pass "1. the live scene in $NS_EX holds the plan's $(wc -w <<<"$names") objects ($(jnum count <<<"$scene") in all)"
    else fail "1. objects missing from the live scene: ${missing[*]:-the plan reported none}"; fi
    wait $sub1 $sub2
    SUB_RESULTS=("events@$SUBNET.1:7701 $(cat "$WORK/intr-sub-gw.out")" "events@$SUBNET.4:7705 $(cat "$WORK/intr-sub-exec.out")")
}

# 2. a validator host is torn down (link down, its processes killed, its
#    namespace deleted) while 30 `plan validate` requests are in flight
one_validate () {   # one_validate I: result in results/I
    local i="$1" t0 rc
    t0=$(date +%s%N)
    cli plan validate "$WORK/plan.json" >"$WORK/results/$i.out" 2>&1
    rc=$?
    echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))" >"$WORK/results/$i.rc"
}
validate_stream () {   # 3 streams × 10, paced so that requests are in flight at the teardown
    local s="$1"
    for k in $(seq 0 9); do one_validate $((s * 10 + k)); sleep 0.1; done
}

teardown_val2 () {
    ip -n "$NS_V2" link set eth0 down              # the host drops off the network: no FIN, no RST
    kill -KILL "$PID_validator_2" 2>/dev/null
    for pid in $(ip netns pids "$NS_V2"); do kill -KILL "$pid" 2>/dev/null; done
    wait "$PID_validator_2" 2>/dev/null
    ip netns del "$NS_V2"
}

check_failover () {
    cat >"$WORK/plan.json" <<'EOF'
[{"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "name": "body", "params": {"radius": 1.0, "location": [0, 0, 1]}},
 {"operation": "object.material", "target": "body", "params": {"color": [1, 1, 1]}}]
EOF
    mkdir -p "$WORK/results"
    cli plan validate "$WORK/plan.json" >"$WORK/validate-probe.out" 2>&1 \
        || die "2. plan validate does not accept the test plan: $(cat "$WORK/validate-probe.out")"
    local before_v2
    before_v2=$(verdicts_from "$SUBNET.3")
    local streams=()
    for s in 0 1 2; do validate_stream "$s" & streams+=("$!"); done
    # tear down once a third of the answers are in
    local end=$(( $(date +%s) + 60 ))
    while [ "$(ls "$WORK/results" | grep -c '\.rc$')" -lt 10 ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.05; done
    local answered_before inflight
    answered_before=$(ls "$WORK/results" | grep -c '\.rc$')
    inflight=$(( $(ls "$WORK/results" | grep -c '\.out$') - answered_before ))
    teardown_val2
    log "2. tore down $NS_V2 (link down, validator killed, namespace deleted) after $answered_before answers, $inflight request(s) in flight"
    wait "${streams[@]}"
    # what validator-2 answered of this load: it sent nothing after the teardown
    local served_v2
    served_v2=$(( $(verdicts_from "$SUBNET.3") - before_v2 ))
    local answered=0 accepted=0 worst=0 lost=()
    for i in $(seq 0 29); do
        if [ -f "$WORK/results/$i.rc" ]; then
            answered=$((answered + 1))
            read -r rc ms <"$WORK/results/$i.rc"
            [ "$rc" = 0 ] && accepted=$((accepted + 1)) || lost+=("#$i exit $rc: $(head -c 200 "$WORK/results/$i.out")")
            [ "$ms" -gt "$worst" ] && worst=$ms
        else lost+=("#$i no result")
        fi
    done
    if [ "$accepted" = 30 ]; then
        pass "2. validator host torn down under load: 30/30 validations answered and accepted (slowest ${worst} ms)"
    else
        fail "2. $accepted/30 validations accepted, $answered answered: ${lost[*]}"
    fi
    [ "${served_v2:-0}" -gt 0 ] && pass "2. validator-2 was serving this load before it vanished ($served_v2 verdicts seen on the bridge)" \
        || fail "2. validator-2 served none of the load before the teardown: it proves nothing"
    local pool
    wait_for 15 pool_is 1 && pool=1 || pool=$(validators_in_pool)
    [ "$pool" = 1 ] && pass "2. the gateway's pool now holds 1 validator (heartbeats noticed)" \
        || fail "2. the pool holds $pool validator(s) after the teardown (want 1)"
    # the hard case happened: a request was in the vanished host's hands, and
    # the broker gave it to the other validator (its deadline or heartbeats)
    local st requeued
    st=$(cli --json status 2>/dev/null)
    requeued=$(jnum requeued <<<"$st")
    local counters="dispatched $(jnum dispatched <<<"$st"), verdicts $(jnum verdicts <<<"$st"), requeued $requeued, expired $(jnum expired <<<"$st"), failed $(jnum failed <<<"$st")"
    [ "${requeued:-0}" -ge 1 ] && pass "2. a request held by the vanished validator went to the other one (broker: $counters)" \
        || fail "2. no request was requeued: the teardown did not happen under load (broker: $counters)"
}

# verdicts a validator host sent to the broker so far, read from the running
# capture (validators log none): its packets to 7702 bigger than a heartbeat
# (a heartbeat is under 200 bytes of TCP payload, a verdict over 350)
verdicts_from () {
    tcpdump -nn -r "$WORK/bridge.pcap" "src host $1 and tcp dst port 7702 and greater 360" 2>/dev/null | wc -l
}

# 3. the intruder (no keys) tries every endpoint: first plain ZeroMQ (no
#    mechanism at all), then CURVE with a keypair of its own and the server's
#    public cert. Each batch runs in parallel; the batches are apart by more
#    than the servers' one-refusal-line-a-second log limit.
ENDPOINTS="dealer gateway  gateway  $SUBNET.1:7700
sub    gateway  gateway  $SUBNET.1:7701
dealer gateway  gateway  $SUBNET.1:7702
dealer planner  planner  $SUBNET.2:7703
dealer executor executor $SUBNET.4:7704
sub    executor executor $SUBNET.4:7705
dealer audit    audit    $SUBNET.1:7706"

intruder_batch () {   # intruder_batch plain|curve: every endpoint at once, 3 s each
    local mode="$1" kind cert_of logname ep
    local -a pids=()
    while read -r kind cert_of logname ep; do
        local cert=()
        [ "$mode" = curve ] && cert=("$WORK/keys-master/$cert_of.cert")
        nsx "$NS_IN" "$BIN/mh_intruder" "$kind" "tcp://$ep" 3000 "${cert[@]}" >"$WORK/intr-$mode-${ep/:/-}.out" 2>&1 &
        pids+=("$!")
    done <<<"$ENDPOINTS"
    local i=0 rc
    while read -r kind cert_of logname ep; do
        wait "${pids[$i]}"; rc=$?; i=$((i + 1))
        local out; out=$(cat "$WORK/intr-$mode-${ep/:/-}.out")
        if [ $rc = 0 ]; then pass "3. intruder ($mode $kind) -> $logname tcp://$ep: refused ($out)"
        else fail "3. intruder ($mode $kind) -> $logname tcp://$ep got through (exit $rc): $out"; fi
    done <<<"$ENDPOINTS"
}

check_intruder () {
    local r
    for r in "${SUB_RESULTS[@]}"; do
        case "$r" in
            *"handshake=failed replies=0"|*"handshake=none replies=0") pass "3. intruder (plain sub, while the plan ran) -> $r: nothing received";;
            *) fail "3. intruder (plain sub, while the plan ran) got through: $r";;
        esac
    done
    intruder_batch plain
    sleep 1.5
    intruder_batch curve
    # each server logged both refusals on each of its endpoints
    local kind cert_of logname ep line
    while read -r kind cert_of logname ep; do
        line=$(grep -m1 "refused a connection on tcp://$ep: \(a protocol error\|the handshake failed\)" "$WORK/logs/$logname.log")
        if [ -n "$line" ]; then pass "3. $logname logged the plain peer: ${line#*WARN  }"
        else fail "3. $logname logged no refusal of the plain peer on tcp://$ep"; fi
        line=$(grep -m1 "refused a connection on tcp://$ep: its key is not trusted" "$WORK/logs/$logname.log")
        if [ -n "$line" ]; then pass "3. $logname logged the untrusted key: ${line#*WARN  }"
        else fail "3. $logname logged no ZAP refusal of the untrusted key on tcp://$ep"; fi
    done <<<"$ENDPOINTS"
}

# 4. the capture on the bridge has the traffic but not the prompt
check_capture () {
    local pcap="$WORK/bridge.pcap"
    local bytes pkts gw_pkts hits phrase
    bytes=$(stat -c %s "$pcap" 2>/dev/null || echo 0)
    pkts=$(tcpdump -nn -r "$pcap" 2>/dev/null | wc -l)
    gw_pkts=$(tcpdump -nn -r "$pcap" "tcp dst port 7700 and greater 100" 2>/dev/null | wc -l)
    if [ "$pkts" -gt 0 ] && [ "$gw_pkts" -gt 0 ]; then
        pass "4. capture on br0: $bytes bytes, $pkts TCP packets, $gw_pkts carrying data to the gateway's port 7700"
    else
        fail "4. the capture holds no TCP traffic to the gateway ($bytes bytes, $pkts packets, $gw_pkts to 7700): it proves nothing"
    fi
    for phrase in "$MARKER" "build a snowman" "primitive_uv_sphere_add"; do
        hits=$(grep -a -o -F "$phrase" "$pcap" | wc -l)
        if [ "$hits" = 0 ]; then pass "4. \"$phrase\" appears nowhere in the capture"
        else fail "4. \"$phrase\" appears $hits time(s) in plaintext in the capture"; fi
    done
}

# ---------------------------------------------------------------- main
net_up
keys_and_configs
services_up
[ -n "${MH_STOP:-}" ] && { cli --json status; log "holding for debugging: $WORK"; sleep "$MH_STOP"; exit 0; }
capture_start
check_plan
check_failover
capture_stop
check_intruder
check_capture
log "$([ $fails = 0 ] && echo PASSED || echo "FAILED ($fails)") in $(elapsed) s"
[ $fails = 0 ]
