#!/usr/bin/python3
"""deploy.services: the deploy files agree with the service registry (issue 31).

usage: check_services.py SRC REGISTRY_JSON   (REGISTRY_JSON: `test_service_registry --json`'s output file)

For every service of common/service_registry.def with a process of its own:
  systemd     deploy/systemd/blendmq-NAME.service (a POOL: blendmq-NAME@.service) runs
              /usr/local/bin/blendmq-NAME --config, is PartOf and WantedBy blendmq.target
  Kubernetes  deploy/kubernetes/NAME.yaml, listed in kustomization.yaml, a Deployment or
              StatefulSet blendmq-NAME whose container runs the image with args [NAME...];
              each config key of its ENDPOINTS is in the cluster's blendmq.yaml, at a
              blendmq-NAME host; README.md's loop makes its key Secret
  container   the image copies every blendmq-* binary, the entrypoint runs blendmq-NAME
              for any NAME (no list of its own)
(the units, the manifests, blendmq.yaml, kustomization.yaml and networkpolicy.yaml are made from
the registry by common/deploy_gen.c: ctest deploy.generated checks they are fresh; this checks
what they say, and the hand-written files) and no deploy file names a service the registry does not know (a unit, a manifest, an
args: [X]), nor does proto/messages.def ("answered by") or common/roles.def (TO, SERVICES). Prints every disagreement; exit 1 when there is one."""
import json
import os
import re
import sys

src, registry = sys.argv[1], sys.argv[2]
with open(registry) as f:
    services = json.load(f)
procs = [s for s in services if s["instances"] != "key_only"]
names = {s["name"] for s in procs}
EXTRA = {"blender"}            # the headless Blender: a unit and a container, no blendmq service
problems = []


def bad(msg):
    problems.append(msg)


def read(*parts):
    path = os.path.join(src, *parts)
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        bad(f"{os.path.join(*parts)}: {e.strerror}")
        return ""


# ---- systemd -------------------------------------------------------------------------
sysd = os.path.join(src, "deploy", "systemd")
for s in procs:
    unit = f"blendmq-{s['name']}{'@' if s['instances'] == 'pool' else ''}.service"
    text = read("deploy", "systemd", unit)
    if text:
        if not re.search(rf"^ExecStart=/usr/local/bin/blendmq-{re.escape(s['name'])} --config ", text, re.M):
            bad(f"deploy/systemd/{unit}: ExecStart does not run /usr/local/bin/blendmq-{s['name']} --config")
        for key in ("PartOf", "WantedBy"):
            if not re.search(rf"^{key}=.*\bblendmq\.target\b", text, re.M):
                bad(f"deploy/systemd/{unit}: no {key}=blendmq.target")
for f in sorted(os.listdir(sysd)):
    m = re.fullmatch(r"blendmq-([a-z0-9_-]+?)@?\.service", f)
    if m and m.group(1) not in names | EXTRA:
        bad(f"deploy/systemd/{f}: no service {m.group(1)} in common/service_registry.def")

# ---- systemd: the audit (and any unit with a user of its own) is out of the others' reach ----
# Its HMAC key and database must be unreadable and unwritable by the services that parse hostile
# input: its User and Group are no other unit's, no other unit's StateDirectory, ReadWritePaths,
# WorkingDirectory or Bind*Paths reaches its state directory or its keys dir (either way round).
def unit_values(text, key):
    """Every value of KEY in [Service], split into words (a leading - + ! or : stripped)."""
    out, section = [], None
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip()
        elif section == "[Service]" and line.startswith(key + "="):
            out += [w.lstrip("-+!:") for w in line[len(key) + 1:].split()]
    return out


def env_of(text):
    return dict(w.split("=", 1) for w in unit_values(text, "Environment") if "=" in w)


def overlaps(a, b):
    a, b = a.rstrip("/") or "/", b.rstrip("/") or "/"
    return a == b or a.startswith(b + "/") or b.startswith(a + "/") or b == "/" or a == "/"


units = {}
for f in sorted(os.listdir(sysd)):
    if f.endswith(".service"):
        units[f] = read("deploy", "systemd", f)


def reach(text):
    """The paths a unit may write or bind, or work in: state, rw, working dir, binds (absolute)."""
    paths = ["/var/lib/" + d for d in unit_values(text, "StateDirectory")]
    for key in ("ReadWritePaths", "WorkingDirectory", "BindPaths", "BindReadOnlyPaths"):
        paths += [p.split(":")[0] for p in unit_values(text, key)]
    return [p for p in paths if p.startswith("/")]


def user_of(text):
    users = unit_values(text, "User")
    return users[0] if users else "root"


own = {f for f, t in units.items() if user_of(t) != "blendmq"}
audit_unit = "blendmq-audit.service"
if audit_unit in units and user_of(units[audit_unit]) == "blendmq":
    bad(f"deploy/systemd/{audit_unit}: User=blendmq, the user every other service runs as: the audit needs its own")
own.add(audit_unit)
for f in sorted(own & set(units)):
    t = units[f]
    user, groups = user_of(t), set(unit_values(t, "Group"))
    states = ["/var/lib/" + d for d in unit_values(t, "StateDirectory")]
    env = env_of(t)
    keys_dir = env.get("BLENDMQ_SECURITY_KEYS_DIR", "")
    if not states:
        bad(f"deploy/systemd/{f}: no StateDirectory= of its own")
    for p in unit_values(t, "ReadWritePaths"):
        if not any(overlaps(p, st) and p.startswith(st) for st in states):
            bad(f"deploy/systemd/{f}: ReadWritePaths={p} is outside its own state directory {' '.join(states)}")
    if unit_values(t, "StateDirectoryMode") != ["0700"]:
        bad(f"deploy/systemd/{f}: StateDirectoryMode is not 0700")
    if not keys_dir.startswith("/etc/blendmq/keys-"):
        bad(f"deploy/systemd/{f}: no keys dir of its own (Environment=BLENDMQ_SECURITY_KEYS_DIR=/etc/blendmq/keys-NAME)")
    if f == audit_unit:
        db = env.get("BLENDMQ_AUDIT_DATABASE", "")
        if not any(db.startswith(st + "/") for st in states):
            bad(f"deploy/systemd/{f}: its database ({db or 'Environment=BLENDMQ_AUDIT_DATABASE unset'}) is not in its state directory")
    mine = states + ([keys_dir] if keys_dir else [])
    for g, other in units.items():
        if g == f:
            continue
        if user_of(other) == user:
            bad(f"deploy/systemd/{g}: User={user}, the user of {f} (a user of its own)")
        shared = (groups | {user}) & (set(unit_values(other, "Group")) | set(unit_values(other, "SupplementaryGroups")) | {user_of(other)})
        if shared:
            bad(f"deploy/systemd/{g}: group {' '.join(sorted(shared))} is {f}'s")
        for p in reach(other):
            for m in mine:
                if overlaps(p, m):
                    bad(f"deploy/systemd/{g}: {p} reaches {m}, {f}'s own (its state or keys)")
        hidden = unit_values(other, "InaccessiblePaths")
        for m in mine:
            if m not in hidden:
                bad(f"deploy/systemd/{g}: {m} ({f}'s own) is not among its InaccessiblePaths")
    # the user exists (sysusers) and its folders are its own, 0700 (tmpfiles)
    sysusers = read("deploy", "systemd", "blendmq.sysusers.conf")
    if not re.search(rf"^u\s+{re.escape(user)}\s", sysusers, re.M):
        bad(f"deploy/systemd/blendmq.sysusers.conf: no user {user} ({f})")
    tmpfiles = read("deploy", "systemd", "blendmq.tmpfiles.conf")
    for m in mine:
        if not re.search(rf"^d\s+{re.escape(m)}\s+0700\s+{re.escape(user)}\s+{re.escape(user)}\s", tmpfiles, re.M):
            bad(f"deploy/systemd/blendmq.tmpfiles.conf: no `d {m} 0700 {user} {user}` ({f})")

# ---- Kubernetes ----------------------------------------------------------------------
kust = read("deploy", "kubernetes", "kustomization.yaml")
resources = re.findall(r"^\s*-\s*([\w.-]+\.yaml)\s*$", kust, re.M)
cluster_cfg = read("deploy", "kubernetes", "blendmq.yaml")
for s in procs:
    name = s["name"]
    text = read("deploy", "kubernetes", f"{name}.yaml")
    if f"{name}.yaml" not in resources:
        bad(f"deploy/kubernetes/kustomization.yaml: {name}.yaml is not among its resources")
    if text:
        if not re.search(rf"^kind:\s*(Deployment|StatefulSet)\s*$", text, re.M) or not re.search(rf"^\s*name:\s*blendmq-{name}\s*$", text, re.M):
            bad(f"deploy/kubernetes/{name}.yaml: no Deployment or StatefulSet named blendmq-{name}")
        if not re.search(rf"^\s*args:\s*\[{re.escape(name)}\b", text, re.M):
            bad(f"deploy/kubernetes/{name}.yaml: no container with args: [{name}]")
    for ep in s["endpoints"].split():
        key = ep.split("=")[0]
        section, field = key.split(".", 1)
        m = re.search(rf"^{re.escape(section)}:\s*\n((?:[ \t]+.*\n|\s*\n)*)", cluster_cfg, re.M)
        line = re.search(rf"^\s+{re.escape(field)}:\s*(\S+)", m.group(1), re.M) if m else None
        if not line:
            bad(f"deploy/kubernetes/blendmq.yaml: no {key} (service {name} binds it)")
        elif f"blendmq-{name}" not in line.group(1):
            bad(f"deploy/kubernetes/blendmq.yaml: {key} is {line.group(1)}, not at the blendmq-{name} host")
for f in sorted(os.listdir(os.path.join(src, "deploy", "kubernetes"))):
    if not f.endswith(".yaml"):
        continue
    text = read("deploy", "kubernetes", f)
    for arg in re.findall(r"^\s*args:\s*\[([a-z0-9_-]+)", text, re.M):
        if arg not in names | EXTRA:
            bad(f"deploy/kubernetes/{f}: a container runs service {arg}, which common/service_registry.def does not know")
    for n in re.findall(r"^kind:\s*(?:Deployment|StatefulSet)\s*\n(?:.*\n)*?\s*name:\s*blendmq-([a-z0-9_-]+)", text, re.M):
        if n not in names | EXTRA:
            bad(f"deploy/kubernetes/{f}: workload blendmq-{n} is no service of common/service_registry.def")

readme = read("deploy", "kubernetes", "README.md")
m = re.search(r"^for s in ([a-z0-9_ -]+); do\s*\n\s*kubectl .*blendmq-key-\$s", readme, re.M)
# or the keys of role service, as `blendmq keys init` made them from the registry (no list of its own)
derived = re.search(r"^for s in \$\(blendmq keys list [^)]*\$2 == \"service\"[^)]*\); do\s*\n\s*kubectl .*blendmq-key-\$s", readme, re.M)
if not m and not derived:
    bad("deploy/kubernetes/README.md: no loop making each service's key Secret (for s in ...; do kubectl ... blendmq-key-$s)")
elif m and set(m.group(1).split()) != names:
    bad(f"deploy/kubernetes/README.md: the key Secrets are made for {' '.join(sorted(set(m.group(1).split())))}, "
        f"the registry has {' '.join(sorted(names))}")

# ---- container -----------------------------------------------------------------------
cf = read("deploy", "container", "Containerfile")
if not re.search(r"cp\s+build-image/bin/blendmq\s+build-image/bin/blendmq-\*\s", cf):
    bad("deploy/container/Containerfile: does not copy every blendmq-* binary (cp build-image/bin/blendmq build-image/bin/blendmq-* ...)")
ep = read("deploy", "container", "entrypoint.sh")
if '"/usr/local/bin/blendmq-$what" --config "$config"' not in ep:
    bad("deploy/container/entrypoint.sh: does not run blendmq-NAME --config for its first argument")
for line in ep.splitlines():
    listed = set(re.findall(r"\b([a-z]+)\b", line.split(")")[0])) if re.match(r"\s*[a-z|]+\)", line) else set()
    if len(listed & names) >= 2:
        bad(f"deploy/container/entrypoint.sh: a list of services of its own: {line.strip()}")

# ---- proto/messages.def, common/roles.def: the services they name are the registry's -----------
all_names = {s["name"] for s in services}
msgs = read("proto", "messages.def")
for m in re.finditer(r'^BMQ_MSG \((\w+),\s*"[^"]*",\s*"([^"]*)"', msgs, re.M):
    for who in m.group(2).split(","):
        if who not in names | {"any", "client"}:
            bad(f"proto/messages.def: {m.group(1)} is answered by '{who}', no service of common/service_registry.def")
roles = read("common", "roles.def")
rules = list(re.finditer(r'^BMQ_RULE \("([^"]*)",\s*(\w+),.*?BMQ_PATH_\w+,\s*(.*)\)\s*(?:/\*.*)?$', roles, re.M))
if len(rules) != len(re.findall(r"^BMQ_RULE \(", roles, re.M)):
    bad(f"common/roles.def: {len(rules)} of its BMQ_RULE rows read: fix the row or tests/deploy/check_services.py")
for m in re.finditer(r'^BMQ_RULE \("([^"]*)",\s*(\w+),.*?BMQ_PATH_\w+,\s*(.*)\)\s*(?:/\*.*)?$', roles, re.M):
    to, msg, rest = m.groups()
    if to not in names | {"*", "broker"}:
        bad(f"common/roles.def: a {msg} row goes to '{to}', no service of common/service_registry.def")
    senders = " ".join(re.findall(r'"([^"]*)"', rest)) + (" *" if "SERVICES_ALL" in rest else "")
    for who in senders.split():
        if who != "*" and who not in all_names:
            bad(f"common/roles.def: {msg} to {to} lets '{who}' send it, no service of common/service_registry.def")

for p in problems:
    print("deploy.services:", p)
print(f"deploy.services: {len(procs)} services, {len(problems)} disagreement(s)")
sys.exit(1 if problems else 0)
