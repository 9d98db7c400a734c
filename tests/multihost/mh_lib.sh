# mh_lib.sh — what the multi-host tests share (sourced, not run): hosts as
# network namespaces on one bridge, each with its own keys dir and config,
# blendmq services started in them, and a cleanup that leaves nothing behind.
#
# The test sets, before sourcing:
#   SRC BIN          the source tree and the build's bin dir
#   SUBNET           e.g. 10.77.0 (a /24)
#   MH_PREFIX        namespace prefix, e.g. bmqmh: namespaces are PREFIX$$-NAME
#   CURVE            security.curve (true/false)
# and after sourcing:
#   ALL_NS           every namespace it makes (for the cleanup), bridge last
#   NS_CL            the client host (cli runs there)
#   GW_IP PLANNER_IP EXEC_IP AUDIT_IP   where the services listen (host_config)
# MH_TAIL_SKIP: a glob of logs/ files not to print on failure (e.g. "watch-*").
# MH_KEEP=1 keeps the work dir. Exit codes: 0 pass, 1 fail, 77 skipped.

T0=$(date +%s%N)
elapsed () { local ms=$(( ($(date +%s%N) - T0) / 1000000 )); printf "%d.%d" $((ms / 1000)) $(( (ms % 1000) / 100 )); }
now_ms () { echo $(( $(date +%s%N) / 1000000 )); }

ID="$MH_PREFIX$$"                     # namespace names: unique per run
NS_BR="$ID-br"
ALL_NS=()
WORK=""
PIDS=()                               # every background process we started
fails=0
KEEP="${MH_KEEP:-}"

log ()  { printf '[%6ss] %s\n' "$(elapsed)" "$*"; }
pass () { log "PASS: $*"; }
fail () { log "FAIL: $*"; fails=$((fails + 1)); }
die ()  { log "FAIL: $*"; fails=$((fails + 1)); exit 1; }
skip () { echo "SKIP: $*"; exit 77; }

mh_cleanup () {
    local rc=$?
    set +e
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for _ in $(seq 50); do
        local alive=0
        for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    # anything else still inside our namespaces (e.g. a CLI a check started) is ours too
    for ns in "${ALL_NS[@]}"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    done
    wait 2>/dev/null
    for ns in "${ALL_NS[@]}"; do ip netns del "$ns" 2>/dev/null; done
    if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "$WORK" ] && [ -d "$WORK/logs" ]; then
        for f in "$WORK"/logs/*.log; do
            # shellcheck disable=SC2254
            case "$(basename "$f")" in ${MH_TAIL_SKIP:-/}) continue;; esac
            echo "----- tail of $(basename "$f")"
            tail -n 15 "$f"
        done
    fi
    if [ -n "$WORK" ] && [ -z "$KEEP" ]; then rm -rf "$WORK"; elif [ -n "$WORK" ]; then echo "kept $WORK"; fi
    local left
    left=$(ip netns list | grep -c "^$ID-")
    [ "$left" = 0 ] || echo "cleanup: $left namespace(s) of $ID left behind"
    exit "$rc"
}
trap mh_cleanup EXIT
trap 'exit 1' INT TERM

# root, the tools (MH_TOOLS, default: ip tcpdump blender), and the binaries
# (names under BIN): else skip or fail
mh_require () {
    [ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
    local tool b
    for tool in ${MH_TOOLS:-ip tcpdump blender}; do command -v "$tool" >/dev/null || skip "$tool is not installed (deploy/install-deps.sh --test)"; done
    for b in "$@"; do [ -x "$BIN/$b" ] || die "$BIN/$b is not built"; done
}

# a run killed outright (ctest's timeout sends SIGKILL) leaves its namespaces:
# remove those whose test process is gone (named PREFIXPID-*)
mh_sweep_stale () {
    local ns pid
    for ns in $(ip netns list | grep -o "^$MH_PREFIX[0-9]*-[a-z0-9]*"); do
        pid=${ns#"$MH_PREFIX"}; pid=${pid%%-*}
        kill -0 "$pid" 2>/dev/null && continue
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null && echo "removed $ns, left by an earlier run"
    done
}

mh_workdir () {   # mh_workdir NAME: WORK=/tmp/blendmq-NAME.XXXXXX with logs/
    WORK=$(mktemp -d "/tmp/blendmq-$1.XXXXXX")
    chmod 700 "$WORK"
    mkdir -p "$WORK/logs"
}

# in NS run CMD
nsx () { local ns="$1"; shift; ip netns exec "$ns" "$@"; }
# start CMD in NS in the background, its output in logs/NAME.log; remember its pid in PID_NAME
start () {
    local ns="$1" name="$2"; shift 2
    ip netns exec "$ns" "$@" >>"$WORK/logs/$name.log" 2>&1 </dev/null &
    PIDS+=("$!")
    eval "PID_${name//-/_}=$!"
}
# wait up to SECONDS for CMD to succeed
wait_for () {
    local secs="$1"; shift
    local end=$(( $(date +%s) + secs ))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -ge "$end" ] && return 1
        sleep 0.2
    done
}

# ---------------------------------------------------------------- network
# reachable = a closed port answers with a RST ("refused"), not silence
reachable () { local out; out=$(nsx "$1" timeout 2 bash -c "</dev/tcp/$2/9" 2>&1); [[ "$out" == *refused* ]]; }

# mh_net_up <<EOF  one line per host: NAMESPACE IP BRIDGE-PORT
# The bridge br0 lives in NS_BR (no address); each host's veth is eth0 in its
# namespace and PORT on the bridge. Checks that NS_CL reaches the first host.
mh_net_up () {
    ip netns add "$NS_BR" || die "cannot create namespace $NS_BR"
    nsx "$NS_BR" ip link set lo up
    nsx "$NS_BR" ip link add br0 type bridge
    nsx "$NS_BR" ip link set br0 up
    local ns ip port first="" hosts=0
    while read -r ns ip port; do
        [ -n "$ns" ] || continue
        ip netns add "$ns" || die "cannot create namespace $ns"
        nsx "$ns" ip link set lo up
        ip -n "$NS_BR" link add "$port" type veth peer name eth0 netns "$ns" || die "cannot create veth $port"
        ip -n "$NS_BR" link set "$port" master br0 up
        nsx "$ns" ip addr add "$ip/24" dev eth0
        nsx "$ns" ip link set eth0 up
        [ -n "$first" ] || first="$ip"
        hosts=$((hosts + 1))
    done
    wait_for 10 reachable "$NS_CL" "$first" || die "the bridge does not carry traffic (the client host cannot reach $first)"
    log "network: $hosts hosts on br0 ($SUBNET.0/24) in namespace $NS_BR"
}

# ---------------------------------------------------------------- keys and config
# every keypair ('blendmq keys init'), the seal key and the Blender token, in keys-master
mh_keys_init () {
    ( umask 077
      "$BIN/blendmq" --keys-dir "$WORK/keys-master" keys init >"$WORK/logs/keys-init.log" 2>&1 ) \
        || die "blendmq keys init failed: $(cat "$WORK/logs/keys-init.log")"
    ( umask 077
      head -c32 /dev/urandom | od -An -vtx1 | tr -d ' \n' >"$WORK/keys-master/verdict.key"
      head -c24 /dev/urandom | od -An -vtx1 | tr -d ' \n' >"$WORK/keys-master/blender.token" )
}

# A host's keys dir: every public cert and trusted/, plus the secrets of NAMES.
host_keys () {
    local host="$1"; shift
    local d="$WORK/$host/keys"
    mkdir -p "$d"; chmod 700 "$d"
    cp -a "$WORK/keys-master"/*.cert "$d/"
    cp -a "$WORK/keys-master/trusted" "$d/"
    for n in "$@"; do
        cp -a "$WORK/keys-master/$n.cert_secret" "$d/"
        [ -f "$WORK/keys-master/$n.token" ] && cp -a "$WORK/keys-master/$n.token" "$d/"
    done
}

# the same configuration on every host but for its keys and files
host_config () {
    local host="$1"
    cat >"$WORK/$host/blendmq.yaml" <<EOF
log: {level: info}
security:
  curve: $CURVE
  keys_dir: $WORK/$host/keys
  verdict_key_file: $WORK/$host/keys/verdict.key
gateway:
  endpoint: "tcp://$GW_IP:7700"
  events: "tcp://$GW_IP:7701"
  validator_broker: "tcp://$GW_IP:7702"
  http_bind: 127.0.0.1
  http_port: 0
planner:
  endpoint: "tcp://$PLANNER_IP:7703"
  backend: offline
  saved_recipes_dir: $WORK/$host/recipes
executor:
  name: exec
  endpoint: "tcp://$EXEC_IP:7704"
  events: "tcp://$EXEC_IP:7705"
blender:
  host: 127.0.0.1
  token_file: $WORK/$host/keys/blender.token
audit:
  endpoint: "tcp://$AUDIT_IP:7706"
  database: $WORK/$host/audit.db
  spool_dir: $WORK/$host/spool
EOF
}

# ---------------------------------------------------------------- services
start_blender () {   # start_blender NS HOST: BLENDER_PORT
    local ns="$1" host="$2"
    start "$ns" blender blender -b --factory-startup \
        --python "$SRC/services/executor/addon/blendmq_addon.py" -- \
        --host 127.0.0.1 --port 0 --port-file "$WORK/$host/blender.port" \
        --token-file "$WORK/$host/keys/blender.token" --reset-scene
    wait_for 120 test -s "$WORK/$host/blender.port" || die "headless Blender did not write its port file"
    BLENDER_PORT=$(cat "$WORK/$host/blender.port")
    log "Blender listening on 127.0.0.1:$BLENDER_PORT in $ns"
}

svc () {   # svc NS HOST SERVICE [LOGNAME] [ENV=VALUE...]
    local ns="$1" host="$2" s="$3" name="${4:-$3}"; shift 4 2>/dev/null || shift 3
    start "$ns" "$name" env "$@" "$BIN/blendmq-$s" --config "$WORK/$host/blendmq.yaml"
}

cli () {   # the CLI on the client host
    nsx "$NS_CL" "$BIN/blendmq" --config "$WORK/client/blendmq.yaml" "$@"
}

# a number field of compact JSON (the CLI's --json output): jnum FIELD <<<JSON
jnum () { grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }

# every service alive, Blender connected, WORKERS validators in the pool
stack_healthy () {
    local workers="$1" st
    st=$(cli --json status 2>/dev/null) || return 1
    echo "$st" >"$WORK/status.json"
    [[ "$st" != *'"alive":false'* ]] || return 1
    [[ "$st" == *'"name":"executor"'*'"state":"blender connected"'* ]] || return 1
    [ "$(jnum workers <<<"$st")" = "$workers" ] || return 1
}
