"""script.rules_decl — proto/script_rules.json, the one declaration of the script rules (issue 31).

  check_rules_decl.py SOURCE_DIR

- gen_protocols.py refuses a malformed declaration (exit 2, saying where): an item listed twice,
  a list with both items and groups, an unknown key, a limit that is not a positive number, an
  item a C string literal could not hold;
- what it makes of the real declaration: the C table holds every list and limit in declared
  order, the Python module the same lists, and script_exec.py's allowlists are those lists (no
  hand copy left in it);
- a change to the declaration changes both outputs (the generated files follow the JSON).
Runs with Debian's /usr/bin/python3, no Blender."""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
GEN = os.path.join(ROOT, "proto", "gen_protocols.py")
DECL = os.path.join(ROOT, "proto", "script_rules.json")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def gen(decl, tmp, *args):
    path = os.path.join(tmp, "rules.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(decl, f)
    return subprocess.run([sys.executable, GEN, "--rules", path, *args], capture_output=True, text=True)


with open(DECL, encoding="utf-8") as f:
    good = json.load(f)


def mutated(fn):
    d = json.loads(json.dumps(good))
    fn(d)
    return d


with tempfile.TemporaryDirectory() as tmp:
    bad = {
        "an item listed twice": (mutated(lambda d: d["lists"]["modules"]["items"].append("bpy")), "listed twice"),
        "items and groups": (mutated(lambda d: d["lists"]["modules"].update(groups=[])), "either items or groups"),
        "an unknown key": (mutated(lambda d: d["lists"]["modules"].update(extra=1)), "script_rules.lists.modules"),
        "a zero limit": (mutated(lambda d: d["limits"]["max_bytes"].update(value=0)), "positive number"),
        "a string limit": (mutated(lambda d: d["limits"]["max_nodes"].update(value="9")), "positive number"),
        "a quote in an item": (mutated(lambda d: d["lists"]["builtins"]["items"].append('a"b')), "plain ASCII"),
        "no limits": (mutated(lambda d: d.pop("limits")), "lists and limits"),
    }
    for what, (decl, words) in bad.items():
        r = gen(decl, tmp, "--c-dir", os.path.join(tmp, "c"))
        check(r.returncode == 2 and words in r.stderr, "refused %s (exit %d: %s)" % (what, r.returncode, r.stderr.strip()))
        check(not os.path.exists(os.path.join(tmp, "c")), "nothing written for %s" % what)

    # the real declaration, generated
    cdir, py = os.path.join(tmp, "c"), os.path.join(tmp, "script_rules.py")
    r = gen(good, tmp, "--c-dir", cdir, "--python", py)
    check(r.returncode == 0, "the declaration generates (%s)" % r.stderr.strip())
    with open(os.path.join(cdir, "bmq_script_rules_table.c"), encoding="utf-8") as f:
        ctext = f.read()
    ns = {}
    with open(py, encoding="utf-8") as f:
        exec(compile(f.read(), py, "exec"), ns)
    for name, e in good["lists"].items():
        items = [i for g in e.get("groups", [{"items": e.get("items")}]) for i in g["items"]]
        m = re.search(r"static const char \*const s_%s\[\] = \{(.*?)NULL\s*\};" % name, ctext, re.S)
        check(m is not None and re.findall(r'"([^"]*)"', m.group(1)) == items, "C list %s is the declaration's" % name)
        check(ns.get(name.upper()) == tuple(items), "Python %s is the declaration's" % name.upper())
        check(re.search(r'\{ "%s", s_%s \}' % (name, name), ctext) is not None, "C table names %s" % name)
    for name, lim in good["limits"].items():
        check(re.search(r'\{ "%s", %r \}' % (name, float(lim["value"])), ctext) is not None, "C limit %s" % name)
        check(ns["LIMITS"].get(name) == lim["value"], "Python limit %s" % name)

    # a changed declaration changes both outputs
    changed = mutated(lambda d: d["lists"]["modules"]["items"].append("colorsys"))
    r = gen(changed, tmp, "--c-dir", cdir, "--python", py)
    with open(os.path.join(cdir, "bmq_script_rules_table.c"), encoding="utf-8") as f:
        check('"random", "colorsys", NULL' in f.read(), "the C table follows the declaration")
    with open(py, encoding="utf-8") as f:
        check('"colorsys"' in f.read(), "the Python module follows the declaration")
    committed = os.path.join(ROOT, "services", "executor", "addon", "blendmq", "script_rules.py")
    r = subprocess.run([sys.executable, GEN, "--rules", os.path.join(tmp, "rules.json"), "--check", committed],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "is stale" in r.stderr, "--check finds the committed copy stale against a changed declaration")

# script_exec.py keeps no hand copy: its allowlists are the generated module's
with open(os.path.join(ROOT, "services", "executor", "addon", "blendmq", "script_exec.py"), encoding="utf-8") as f:
    guard = f.read()
for name in ("MODULES", "BUILTINS", "FORBIDDEN_BUILTINS", "DENIED_ATTRIBUTES", "OP_CATEGORIES", "DENIED_OPS",
             "DENIED_OP_WORDS", "DENIED_STRING_WORDS"):
    m = re.search(r"^%s = (.*)$" % name, guard, re.M)
    check(m is not None and "_rules." + name in m.group(1), "script_exec.%s comes from script_rules.py" % name)
check('"exec_module"' not in guard and '"quick_smoke"' not in guard, "script_exec.py holds no copy of the lists")
with open(os.path.join(ROOT, "common", "script", "script_rules.c"), encoding="utf-8") as f:
    check('"exec_module"' not in f.read(), "script_rules.c holds no copy of the lists")

print("%d failure(s)" % len(failures) if failures else "script rules: one declaration, both outputs follow it")
sys.exit(1 if failures else 0)
