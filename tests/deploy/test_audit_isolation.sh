#!/bin/bash
# deploy.audit_isolation: the checks that keep the audit out of the other services' reach
# (check_services.py for systemd, check_kustomize.py for Kubernetes) really fail: each case
# breaks one thing in a copy of the deploy files and wants the check to exit 1 naming it.
#   test_audit_isolation.sh SRC REGISTRY_JSON [KUBECTL]   (no KUBECTL: the Kubernetes cases are skipped)
set -u
src="$1"; registry="$2"; kubectl="${3:-}"
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIPPED: /usr/bin/python3 is not installed"; exit 77; }
services="$($py -c 'import json,sys; print(" ".join(s["name"] for s in json.load(open(sys.argv[1])) if s["instances"] != "key_only"))' "$registry")"
pass=0; fails=0
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

copy () {
  rm -rf "$work/t"; mkdir -p "$work/t/proto" "$work/t/common"
  cp -R "$src/deploy" "$work/t/"; cp "$src/proto/messages.def" "$work/t/proto/"; cp "$src/common/roles.def" "$work/t/common/"
}
check () {   # services|kustomize DIR: its output; its exit code in $rc
  if [ "$1" = services ]; then out="$($py "$src/tests/deploy/check_services.py" "$2" "$registry" 2>&1)"; rc=$?
  else out="$($py "$src/tests/deploy/check_kustomize.py" "$kubectl" "$2" "$services" 2>&1)"; rc=$?; fi
}
# case CHECKER FILE SED WANT: break FILE with SED, the checker must exit 1 saying WANT
case_ () {
  local what="$1" file="$2" expr="$3" want="$4"
  if [ "$what" = kustomize ] && [ -z "$kubectl" ]; then echo "skip (no kubectl): $want"; return; fi
  copy
  sed -i "$expr" "$work/t/$file"
  if cmp -s "$work/t/$file" "$src/$file"; then echo "FAIL: the edit of $file changed nothing ($expr)"; fails=$((fails + 1)); return; fi
  check "$what" "$work/t"
  if [ $rc -eq 1 ] && grep -qF -- "$want" <<<"$out"; then pass=$((pass + 1)); echo "ok: $file broken -> $want"
  else fails=$((fails + 1)); echo "FAIL: $file broken ($expr): check_$what exited $rc, wanted 1 and '$want'"; echo "$out" | tail -5; fi
}

# the tree as it is passes both
copy; check services "$work/t"; [ $rc -eq 0 ] && pass=$((pass + 1)) || { fails=$((fails + 1)); echo "FAIL: check_services on the tree: $out"; }
if [ -n "$kubectl" ]; then check kustomize "$work/t"; [ $rc -eq 0 ] && pass=$((pass + 1)) || { fails=$((fails + 1)); echo "FAIL: check_kustomize on the tree: $out"; }; fi

S=deploy/systemd K=deploy/kubernetes
case_ services $S/blendmq-audit.service 's/^User=blendmq-audit$/User=blendmq/' "blendmq-audit.service: User=blendmq, the user every other service runs as"
case_ services $S/blendmq-planner.service 's/^User=blendmq$/User=blendmq-audit/' "blendmq-planner.service: User=blendmq-audit, the user of blendmq-audit.service"
case_ services $S/blendmq-gateway.service 's/^Group=blendmq$/Group=blendmq-audit/' "blendmq-gateway.service: group blendmq-audit is blendmq-audit.service's"
case_ services $S/blendmq-gateway.service 's|^ReadWritePaths=/var/lib/blendmq$|ReadWritePaths=/var/lib/blendmq /var/lib/blendmq-audit|' \
      "blendmq-gateway.service: /var/lib/blendmq-audit reaches /var/lib/blendmq-audit"
case_ services $S/blendmq-executor.service 's|^StateDirectory=blendmq$|StateDirectory=blendmq blendmq-audit/spool|' \
      "blendmq-executor.service: /var/lib/blendmq-audit/spool reaches /var/lib/blendmq-audit"
case_ services "$S/blendmq-validator@.service" 's|^ReadWritePaths=/var/lib/blendmq$|ReadWritePaths=/var/lib|' \
      "blendmq-validator@.service: /var/lib reaches /var/lib/blendmq-audit"
case_ services $S/blendmq-planner.service 's|^ReadWritePaths=/var/lib/blendmq$|ReadWritePaths=/var/lib/blendmq /etc/blendmq/keys-audit|' \
      "blendmq-planner.service: /etc/blendmq/keys-audit reaches /etc/blendmq/keys-audit"
case_ services $S/blendmq-blender.service '/^InaccessiblePaths=/d' "blendmq-blender.service: /var/lib/blendmq-audit (blendmq-audit.service's own) is not among its InaccessiblePaths"
case_ services $S/blendmq-audit.service 's|^ReadWritePaths=.*|ReadWritePaths=/var/lib/blendmq-audit /var/lib/blendmq|' \
      "blendmq-audit.service: ReadWritePaths=/var/lib/blendmq is outside its own state directory"
case_ services $S/blendmq-audit.service 's|^Environment=BLENDMQ_AUDIT_DATABASE=.*|Environment=BLENDMQ_AUDIT_DATABASE=/var/lib/blendmq/blendmq-audit.db|' \
      "blendmq-audit.service: its database (/var/lib/blendmq/blendmq-audit.db) is not in its state directory"
case_ services $S/blendmq-audit.service '/^Environment=BLENDMQ_SECURITY_KEYS_DIR=/d' "blendmq-audit.service: no keys dir of its own"
case_ services $S/blendmq.tmpfiles.conf 's|^\(d *\)/var/lib/blendmq-audit \( *\)0700|\1/var/lib/blendmq-audit\20750|' \
      "blendmq.tmpfiles.conf: no \`d /var/lib/blendmq-audit 0700 blendmq-audit blendmq-audit\`"
case_ services $S/blendmq.sysusers.conf '/^u *blendmq-audit /d' "blendmq.sysusers.conf: no user blendmq-audit"
case_ kustomize $K/planner.yaml 's/runAsUser: 10001/runAsUser: 10002/' "Deployment/blendmq-planner: runs as uid [10002], the audit pod's"
case_ kustomize $K/gateway.yaml 's/fsGroup: 10001/fsGroup: 10002/' "Deployment/blendmq-gateway: runs with gid [10002], the audit pod's"
case_ kustomize $K/audit.yaml 's/: 10002$/: 10001/' "Deployment/blendmq-gateway: runs as uid [10001], the audit pod's"
case_ kustomize $K/validator.yaml \
      's|^        - {name: config, configMap: {name: blendmq-config}}|&\n        - {name: x, persistentVolumeClaim: {claimName: audit-data-blendmq-audit-0}}|' \
      "Deployment/blendmq-validator: mounts the audit's volume audit-data-blendmq-audit-0"
case_ kustomize $K/executor.yaml 's|secretName: blendmq-key-executor|secretName: blendmq-key-audit|' "StatefulSet/blendmq-executor: mounts the audit's key Secret"

echo "deploy.audit_isolation: $pass passed, $fails failed"
[ $fails -eq 0 ]
