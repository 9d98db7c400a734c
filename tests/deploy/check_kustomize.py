#!/usr/bin/python3
"""deploy.kustomize: render deploy/kubernetes with `kubectl kustomize` and check it.

    check_kustomize.py KUBECTL SRC_DIR

Every Deployment/StatefulSet (init containers included): runAsNonRoot true,
no privileged container, allowPrivilegeEscalation false, capabilities drop ALL,
readOnlyRootFilesystem true; the audit's volume and key Secret are its pod's alone and its
uid/gid (runAsUser, runAsGroup, fsGroup) no other pod's; the expected kinds and names exist; no Secret
(keys are never in git); default-deny NetworkPolicy; the ConfigMap's endpoints
use Service DNS names and every Secret a pod mounts is documented."""
import subprocess, sys, yaml

kubectl, src = sys.argv[1], sys.argv[2]
# the registry's services with a process: CMake reads common/service_registry.def (services/CMakeLists.txt)
services = sys.argv[3].split() if len(sys.argv) > 3 else []
if not services:
    sys.exit("check_kustomize.py KUBECTL SRC \"SERVICE ...\": no services given")
out = subprocess.run([kubectl, "kustomize", f"{src}/deploy/kubernetes"], check=True,
                     capture_output=True, text=True).stdout
docs = [d for d in yaml.safe_load_all(out) if d]
fails, checks = [], 0

def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        fails.append(msg)

by = {}
for d in docs:
    by.setdefault((d["kind"], d["metadata"]["name"]), d)
    check(d["kind"] == "Namespace" or d["metadata"].get("namespace") == "blendmq",
          f'{d["kind"]}/{d["metadata"]["name"]}: not in namespace blendmq')

want = [("Deployment", "blendmq-gateway"), ("Service", "blendmq-gateway"),
        ("Deployment", "blendmq-planner"), ("Service", "blendmq-planner"),
        ("Deployment", "blendmq-validator"), ("HorizontalPodAutoscaler", "blendmq-validator"),
        ("StatefulSet", "blendmq-executor"), ("Service", "blendmq-executor"),
        ("StatefulSet", "blendmq-audit"), ("Service", "blendmq-audit"),
        ("NetworkPolicy", "default-deny")]
for k in want:
    check(k in by, f"missing {k[0]}/{k[1]}")
check(not any(d["kind"] == "Secret" for d in docs), "a Secret is rendered: keys must never be in git")

# workloads
workloads = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet")]
check(len(workloads) == len(services), f"want {len(services)} workloads (one per registry service), got {len(workloads)}")
secrets_used = set()
for w in workloads:
    name = f'{w["kind"]}/{w["metadata"]["name"]}'
    pod = w["spec"]["template"]["spec"]
    psc = pod.get("securityContext") or {}
    check(pod.get("automountServiceAccountToken") is False, f"{name}: service account token mounted")
    check(not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC"), f"{name}: host namespaces")
    for c in pod.get("initContainers", []) + pod["containers"]:
        sc = c.get("securityContext") or {}
        cn = f'{name} container {c["name"]}'
        check(sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, f"{cn}: runAsNonRoot is not true")
        check(sc.get("privileged") is not True, f"{cn}: privileged")
        check(sc.get("allowPrivilegeEscalation") is False, f"{cn}: allowPrivilegeEscalation not false")
        check("ALL" in (sc.get("capabilities") or {}).get("drop", []), f"{cn}: capabilities not dropped")
        check(not (sc.get("capabilities") or {}).get("add"), f"{cn}: capabilities added")
        check(sc.get("readOnlyRootFilesystem") is True, f"{cn}: root filesystem writable")
        uid = sc.get("runAsUser", psc.get("runAsUser"))
        check(uid not in (None, 0), f"{cn}: runAsUser {uid}")
        check(c["image"].startswith("registry.example.org/blendmq"), f"{cn}: image {c['image']}")
    for v in pod.get("volumes", []):
        if "secret" in v:
            secrets_used.add(v["secret"]["secretName"])
        check("hostPath" not in v, f"{name}: hostPath volume {v['name']}")
    if w["metadata"]["name"] != "blendmq-executor":
        check((psc.get("seccompProfile") or {}).get("type") == "RuntimeDefault", f"{name}: seccomp not RuntimeDefault")

ex = by.get(("StatefulSet", "blendmq-executor"))
if ex:
    names = sorted(c["name"] for c in ex["spec"]["template"]["spec"]["containers"])
    check(names == ["blender", "executor"], f"executor pod containers {names}")
    check(ex["spec"]["template"]["spec"].get("hostUsers") is False, "executor pod: hostUsers must be false (user namespace)")
au = by.get(("StatefulSet", "blendmq-audit"))
if au:
    check(any(t["metadata"]["name"] == "audit-data" for t in au["spec"].get("volumeClaimTemplates", [])),
          "audit StatefulSet: no PersistentVolumeClaim template")
# The audit's volume and key are its pod's alone, and its uid/gid no other pod's: a compromised
# planner, gateway, executor or validator must not read the HMAC key or rewrite the database.
def pod_ids(w):
    """Every uid and gid a workload's containers run with (pod and container securityContext)."""
    pod = w["spec"]["template"]["spec"]
    psc = pod.get("securityContext") or {}
    uids, gids = set(), set()
    for c in pod.get("initContainers", []) + pod["containers"]:
        sc = c.get("securityContext") or {}
        uids.add(sc.get("runAsUser", psc.get("runAsUser")))
        gids.add(sc.get("runAsGroup", psc.get("runAsGroup")))
    gids |= {psc.get("fsGroup")} | set(psc.get("supplementalGroups") or [])
    return uids - {None}, gids - {None}


def claims(w):
    """The volume claims a workload mounts: its templates' names and its PVC volumes' claims."""
    pod = w["spec"]["template"]["spec"]
    out = {t["metadata"]["name"] for t in w["spec"].get("volumeClaimTemplates", [])}
    out |= {v["persistentVolumeClaim"]["claimName"] for v in pod.get("volumes", []) if "persistentVolumeClaim" in v}
    return out


if au:
    au_uids, au_gids = pod_ids(au)
    au_claims = claims(au)
    check(au_uids and au_gids, "audit pod: no runAsUser/runAsGroup/fsGroup of its own")
    sts_pvcs = {f"{c}-blendmq-audit-" for c in au_claims}       # a StatefulSet's PVCs: TEMPLATE-STS-N
    for w in workloads:
        if w is au:
            continue
        name = f'{w["kind"]}/{w["metadata"]["name"]}'
        uids, gids = pod_ids(w)
        check(not (uids & au_uids), f"{name}: runs as uid {sorted(uids & au_uids)}, the audit pod's")
        check(not (gids & au_gids), f"{name}: runs with gid {sorted(gids & au_gids)}, the audit pod's (group or fsGroup)")
        for c in claims(w):
            check(c not in au_claims and not any(c.startswith(p) for p in sts_pvcs), f"{name}: mounts the audit's volume {c}")
        pod = w["spec"]["template"]["spec"]
        for v in pod.get("volumes", []):
            check((v.get("secret") or {}).get("secretName") != "blendmq-key-audit", f"{name}: mounts the audit's key Secret")

hpa = by.get(("HorizontalPodAutoscaler", "blendmq-validator"))
if hpa:
    check(hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "blendmq-validator"},
          "HPA does not target the validator Deployment")

# network policies
dd = by.get(("NetworkPolicy", "default-deny"))
if dd:
    check(dd["spec"]["podSelector"] == {} and sorted(dd["spec"]["policyTypes"]) == ["Egress", "Ingress"]
          and "ingress" not in dd["spec"] and "egress" not in dd["spec"], "default-deny does not deny everything")
for svc in services:                        # the registry's (CMake reads common/service_registry.def)
    np = by.get(("NetworkPolicy", svc))
    check(np is not None and np["spec"]["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": f"blendmq-{svc}"}},
          f"no NetworkPolicy for blendmq-{svc}")

# config: connect endpoints are Services' DNS names
cms = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("blendmq-config")]
check(len(cms) == 1, "no blendmq-config ConfigMap")
if cms:
    cfg = yaml.safe_load(cms[0]["data"]["blendmq.yaml"])
    svcs = {n for (k, n) in by if k == "Service"}
    for sec, key in [("gateway", "endpoint"), ("gateway", "events"), ("gateway", "validator_broker"),
                     ("planner", "endpoint"), ("executor", "endpoint"), ("executor", "events"), ("audit", "endpoint")]:
        ep = cfg.get(sec, {}).get(key, "")
        host = ep.removeprefix("tcp://").rsplit(":", 1)[0]
        check(ep.startswith("tcp://") and (host in svcs or host.split(".")[-1] in svcs),
              f"config {sec}.{key} = {ep!r} is not a Service DNS name")

# every Secret a pod mounts is created by a documented command
doc = open(f"{src}/deploy/kubernetes/README.md").read()
import re
loop = re.search(r"for s in ([a-z ]+); do\n\s*kubectl -n blendmq create secret generic blendmq-key-\$s ", doc)
looped = {f"blendmq-key-{n}" for n in loop.group(1).split()} if loop else set()
# or the loop over the keys of role service (`blendmq keys init` makes one for each registry service)
if re.search(r"for s in \$\(blendmq keys list [^)]*\$2 == \"service\"[^)]*\); do\n\s*kubectl -n blendmq create secret generic blendmq-key-\$s ", doc):
    looped |= {f"blendmq-key-{n}" for n in services}
for s in sorted(secrets_used):
    check(f"secret generic {s} " in doc or s in looped, f"Secret {s} has no `kubectl create secret generic {s}` in deploy/kubernetes/README.md")

for f in fails:
    print("FAIL:", f)
print(f"{checks - len(fails)} passed, {len(fails)} failed")
sys.exit(1 if fails or checks < 100 else 0)
