#!/usr/bin/python3
"""docs.howtos: the how-to pages in docs/ name files that exist, and the add-a-service page
names every file a new service needs (issue 31).

usage: check_howtos.py SRC REGISTRY_JSON CHECK_SERVICES_PY [DEPLOY_GEN_SIXTH]

- every docs/howto-*.md has a "## Files to touch" list; each path in backticks there (and
  under "## Derived") exists, NAME read as an existing service (planner);
- a fake sixth service added to the registry makes check_services.py complain about deploy
  files: each one is on docs/howto-add-service.md's list, to touch or derived (NAME for the
  sixth's name);
- DEPLOY_GEN_SIXTH (test_deploy_gen built over the registry plus the sixth's rows,
  tests/deploy/sixth_registry.def) writes the deploy files into a copy of the tree, and
  check_services.py then accepts the sixth: its rows are all its deploy files need;
- a file the service page marks derived only holds no list of services of its own (a line,
  not a comment, naming three or more of the registry's services)."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import shutil
src, registry, checker = sys.argv[1], sys.argv[2], sys.argv[3]
gen_sixth = sys.argv[4] if len(sys.argv) > 4 else None
problems = []
with open(registry) as f:
    services = json.load(f)
names = [s["name"] for s in services if s["instances"] != "key_only"]


def section(text, title):
    m = re.search(rf"^## {re.escape(title)}\s*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    return m.group(1) if m else ""


def subjects(block):
    """The first path of each "- " item: what a Derived item is about (the rest is prose)."""
    out = []
    for line in block.splitlines():
        if line.startswith("- "):
            out += paths(line)[:1]
    return out


def paths(block):
    out = []
    for tok in re.findall(r"`([^`\s]+)`", block):
        if "/" in tok and not tok.startswith("build/") and not re.search(r"[{}*$]", tok) and re.match(r"[\w./@-]+$", tok):
            out.append(tok)
    return out


pages = sorted(glob.glob(os.path.join(src, "docs", "howto-*.md")))
if len(pages) < 4:
    problems.append(f"docs/: {len(pages)} how-to pages, want 4 (plan operation, service, route, link command)")
listed = {}
for page in pages:
    rel = os.path.relpath(page, src)
    text = open(page).read()
    touch = section(text, "Files to touch")
    if not touch:
        problems.append(f"{rel}: no '## Files to touch' section")
    derived_block = section(text, "Derived: nothing to edit")
    listed[rel] = (paths(touch), subjects(derived_block), paths(section(text, "Only when it needs them")))
    for p in listed[rel][0] + listed[rel][1] + listed[rel][2] + paths(derived_block):
        real = p.replace("NAME", "planner")
        if not os.path.exists(os.path.join(src, real)):
            problems.append(f"{rel}: names {p}, which does not exist ({real})")

# the fake sixth service: what the deploy check asks for must be on the page
page = "docs/howto-add-service.md"
touch, derived, when = listed.get(page, ([], [], []))
# the measure (issue 31): the files a new service touches, the first path of each item
service_text = open(os.path.join(src, page)).read()
always = [paths(line)[0] for line in section(service_text, "Files to touch").splitlines()
          if re.match(r"\d+\. ", line) and paths(line)]
needed = subjects(section(service_text, "Only when it needs them"))
print(f"docs.howtos: adding a service touches {len(always)} file(s) or folder(s) always ({', '.join(always)}), "
      f"and {len(needed)} more when it needs them ({', '.join(needed)})")
sixth = dict(name="sixth", order=max(s["order"] for s in services) + 1, instances="one",
             endpoints="sixth.endpoint=sixth", waited=False, health="heartbeat")
rows = [s for s in services if s["instances"] != "key_only"] + [sixth] + [s for s in services if s["instances"] == "key_only"]
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(rows, f)
    fake = f.name
run = subprocess.run(["/usr/bin/python3", checker, src, fake], capture_output=True, text=True)
os.unlink(fake)
if run.returncode == 0:
    problems.append("check_services.py accepted a sixth service that has no deploy files")
wanted = set()
for line in run.stdout.splitlines():
    m = re.match(r"deploy\.services: (deploy/[^:\s]+)", line)
    if m:
        wanted.add(m.group(1).replace("sixth", "NAME"))
if not wanted:
    problems.append("check_services.py named no file for the sixth service")
for w in sorted(wanted):
    if w not in touch and w not in derived:
        problems.append(f"{page}: a new service needs {w} (deploy.services says so), not on its list")

# the sixth's deploy files, made from its registry rows: deploy.services accepts them
if gen_sixth:
    tmp = tempfile.mkdtemp(prefix="howto-sixth-")
    try:
        for d in ("deploy", "proto", "common"):
            shutil.copytree(os.path.join(src, d), os.path.join(tmp, d),
                            ignore=lambda _d, names: [n for n in names if n.endswith((".c", ".h", ".py", ".o"))])
        gen = subprocess.run([gen_sixth, "--write", tmp], capture_output=True, text=True)
        if gen.returncode != 0:
            problems.append(f"the generator over the registry plus a sixth service failed: {gen.stderr.strip()}")
        made = [line.split(tmp + "/", 1)[1] for line in gen.stdout.splitlines() if line.startswith("wrote ")]
        for want in ("deploy/systemd/blendmq-sixth.service", "deploy/kubernetes/sixth.yaml"):
            if want not in made:
                problems.append(f"the generator did not make {want} for the sixth service")
        for m in made:          # the sixth's own files and the shared ones (not another service's own)
            if any(re.search(rf"[-/]{re.escape(n)}[@.]", m) for n in names):
                continue
            g = m.replace("sixth", "NAME")
            if g not in derived and g not in touch:
                problems.append(f"{page}: the generator makes {g}, which the page does not list as derived")
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(rows, f)
            fake = f.name
        run = subprocess.run(["/usr/bin/python3", checker, tmp, fake], capture_output=True, text=True)
        os.unlink(fake)
        if run.returncode != 0:
            problems.append("deploy.services refuses the sixth service's generated deploy files:\n" + run.stdout)
        else:
            print("docs.howtos: a sixth service's deploy files, made from its registry rows, pass deploy.services "
                  f"({len(made)} files written)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
else:
    problems.append("no DEPLOY_GEN_SIXTH given: cannot check that a sixth service's deploy files are made from its rows")

# derived only: no list of services of its own
for p in derived:
    if p in touch or p in when or os.path.isdir(os.path.join(src, p)):
        continue
    for i, line in enumerate(open(os.path.join(src, p.replace("NAME", "planner"))), 1):
        s = line.strip()
        if s.startswith(("#", "*", "/*", "//")):
            continue
        found = {n for n in names if re.search(rf"\b{re.escape(n)}\b", s)}
        if len(found) >= 3:
            problems.append(f"{p}:{i}: a list of services of its own ({', '.join(sorted(found))}); the registry is "
                            "common/service_registry.def")

for p in problems:
    print("docs.howtos:", p)
print(f"docs.howtos: {len(pages)} pages, {sum(len(a) + len(b) + len(c) for a, b, c in listed.values())} files named, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
