#!/usr/bin/env bash
# deploy.systemd: the units in deploy/systemd/ are complete, hardened and valid.
#   test_systemd.sh SRC_DIR BIN_DIR [SYSTEMD_ANALYZE]
# Always: a parser check of every unit (keys present, hardening, relaxations
# only in the executor). With systemd-analyze: `verify` of every unit (binaries
# pointed at BIN_DIR; any warning fails) and `security --offline` exposure caps.
set -uo pipefail
src="$1"; bindir="$2"; analyze="${3:-}"
dir="$src/deploy/systemd"
fails=0; checks=0
fail () { echo "FAIL: $*"; fails=$((fails + 1)); }
ok () { checks=$((checks + 1)); }

# the registry's services with a process (CMake reads common/service_registry.def: BMQ_SERVICES);
# a POOL's unit is a template (NAME@); and the headless Blender's
[ -n "${BMQ_SERVICES:-}" ] || { echo "FAIL: BMQ_SERVICES (the registry's services) is not set"; exit 1; }
services=()
for s in $BMQ_SERVICES; do
  if [ -f "$dir/blendmq-$s@.service" ]; then services+=("$s@"); else services+=("$s"); fi
done
services+=(blender)
# value of KEY in [Service] (all occurrences, one per line)
get () { awk -v k="$2" -F= '/^\[/{s=$0} s=="[Service]" && $1==k {sub(/^[^=]*=/,""); print}' "$1"; }
has () { [ "$(get "$1" "$2")" = "$3" ] && ok || fail "$(basename "$1"): $2=$3 expected, got '$(get "$1" "$2" | tr '\n' '|')'"; }

for s in "${services[@]}"; do
  u="$dir/blendmq-$s.service"
  [ -f "$u" ] || { fail "missing $u"; continue; }
  n=$(basename "$u")
  # no unknown sections, every line KEY=VALUE, comment or section
  bad=$(grep -vnE '^(#.*|\s*|\[(Unit|Service|Install)\]|[A-Za-z]+=.*)$' "$u")
  [ -z "$bad" ] && ok || fail "$n: unparsable lines: $bad"
  # the audit runs as a user of its own, its state in its own directory (check_services.py: out of the others' reach)
  case "$s" in audit) user=blendmq-audit;; *) user=blendmq;; esac
  has "$u" User $user
  has "$u" Group $user
  has "$u" ProtectSystem strict
  has "$u" ProtectHome yes
  has "$u" NoNewPrivileges yes
  has "$u" PrivateTmp yes
  has "$u" PrivateDevices yes
  has "$u" CapabilityBoundingSet ""
  has "$u" AmbientCapabilities ""
  has "$u" ReadWritePaths /var/lib/$user
  has "$u" Restart on-failure
  has "$u" SystemCallArchitectures native
  [ -n "$(get "$u" RestartSec)" ] && ok || fail "$n: no RestartSec"
  grep -q '^StartLimitIntervalSec=[1-9]' "$u" && grep -q '^StartLimitBurst=[1-9]' "$u" && ok || fail "$n: no StartLimit settings"
  grep -q '^WantedBy=blendmq.target$' "$u" && ok || fail "$n: not WantedBy=blendmq.target"
  grep -q '^PartOf=blendmq.target$' "$u" && ok || fail "$n: not PartOf=blendmq.target"
  # the first filter line is the @system-service allow list (+@mount for the executor only)
  first=$(get "$u" SystemCallFilter | head -1)
  case "$s" in
    executor) [ "$first" = "@system-service @mount" ] && ok || fail "$n: SystemCallFilter '$first'";;
    *)        [ "$first" = "@system-service" ] && ok || fail "$n: SystemCallFilter '$first'";;
  esac
  fams=$(get "$u" RestrictAddressFamilies)
  case "$s" in
    gateway|planner|executor|audit) want="AF_UNIX AF_INET AF_INET6 AF_NETLINK";;   # they bind: getifaddrs
    *) want="AF_UNIX AF_INET AF_INET6";;
  esac
  [ "$fams" = "$want" ] && ok || fail "$n: RestrictAddressFamilies '$fams', want '$want'"
  exec_start=$(get "$u" ExecStart)
  if [ "$s" = blender ]; then
    [[ "$exec_start" == /usr/bin/blender\ -b\ *blendmq_addon.py*--token-file\ /etc/blendmq/keys/* ]] && ok || fail "$n: ExecStart '$exec_start'"
  else
    [[ "$exec_start" == "/usr/local/bin/blendmq-${s%@} --config /etc/blendmq/blendmq.yaml" ]] && ok || fail "$n: ExecStart '$exec_start'"
    get "$u" Environment | grep -qx 'BLENDMQ_DATA_DIR=/usr/local/share/blendmq' && ok || fail "$n: no Environment=BLENDMQ_DATA_DIR=/usr/local/share/blendmq"
  fi
  # relaxations: only the executor may run without these (bubblewrap), documented in its unit
  for k in RestrictNamespaces ProtectKernelTunables ProtectKernelLogs PrivateUsers ProtectProc; do
    v=$(get "$u" $k)
    if [ "$s" = executor ]; then
      [ -z "$v" ] && grep -q "^#.*$k=" "$u" && ok || fail "$n: $k must be unset and its absence documented"
    else
      [ -n "$v" ] && ok || fail "$n: $k not set"
    fi
  done
done
grep -q '^WantedBy=multi-user.target$' "$dir/blendmq.target" && ok || fail "blendmq.target: not WantedBy=multi-user.target"
grep -qE '^u +blendmq ' "$dir/blendmq.sysusers.conf" && ok || fail "sysusers: no blendmq user"
grep -qE '^d +/etc/blendmq/keys +0700 +blendmq +blendmq' "$dir/blendmq.tmpfiles.conf" && ok || fail "tmpfiles: /etc/blendmq/keys 0700 blendmq"
grep -qE '^u +blendmq-audit ' "$dir/blendmq.sysusers.conf" && ok || fail "sysusers: no blendmq-audit user"
grep -qE '^d +/etc/blendmq/keys-audit +0700 +blendmq-audit +blendmq-audit' "$dir/blendmq.tmpfiles.conf" && ok || fail "tmpfiles: /etc/blendmq/keys-audit 0700 blendmq-audit"
grep -qE '^d +/var/lib/blendmq-audit +0700 +blendmq-audit +blendmq-audit' "$dir/blendmq.tmpfiles.conf" && ok || fail "tmpfiles: /var/lib/blendmq-audit 0700 blendmq-audit"

if [ -n "$analyze" ]; then
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  cp "$dir"/*.service "$dir"/*.target "$tmp/"
  sed -i "s#/usr/local/bin/#$bindir/#" "$tmp"/*.service
  for u in blendmq-gateway.service blendmq-planner.service blendmq-validator@1.service blendmq-validator@2.service \
           blendmq-executor.service blendmq-audit.service blendmq-blender.service blendmq.target; do
    out=$("$analyze" verify --man=no "$tmp/$u" 2>&1); rc=$?
    [ $rc -eq 0 ] && [ -z "$out" ] && ok || fail "systemd-analyze verify $u (rc $rc): $out"
  done
  # exposure (0 safest .. 10): the executor's sandbox relaxations cost it ~2 points
  for u in gateway:2.0 planner:2.0 validator@:2.0 audit:2.0 blender:2.0 executor:3.5; do
    name="blendmq-${u%%:*}.service"; cap="${u##*:}"
    level=$("$analyze" security --offline=yes "$tmp/$name" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
    if [ -n "$level" ] && awk -v l="$level" -v c="$cap" 'BEGIN{exit !(l <= c)}'; then ok; echo "$name exposure $level (cap $cap)"
    else fail "$name exposure '${level}' above $cap"; fi
  done
fi
echo "$checks passed, $fails failed"
[ $fails -eq 0 ] && [ $checks -gt 100 ] || exit 1
# the parser checks passed, but `verify` and the exposure caps did not run: not a pass
[ -n "$analyze" ] || { echo "SKIPPED: systemd-analyze is not installed (Debian's systemd package): no verify, no exposure caps"; exit 77; }
