#!/usr/bin/python3
"""cli.config_keys (issue 29, issue 31 "Typed configuration"): common/config_keys.def
declares every configuration key once. This check fails when
  - deploy/blendmq.yaml (the defaults built into every binary) has a key the
    declaration lacks, or the other way round;
  - a declared default differs from the YAML's, or its type does;
  - an INT default is outside its declared range, an ENUM default is not one
    of its choices;
  - code reads a key (bmq_config_str/int/bool/json/set "section.key") that is
    not declared (in test builds that read also aborts at run time).
Usage: check_config_keys.py SOURCE_DIR"""
import json
import os
import re
import sys

import yaml

src = sys.argv[1]
problems = []

text = open(os.path.join(src, "common/config_keys.def"), encoding="utf-8").read()
decl = {}
pattern = re.compile(r'BMQ_CONFIG_KEY \(("[^"]*"),\s*(\w+),\s*("(?:[^"\\]|\\.)*"),\s*("(?:[^"\\]|\\.)*"),\s*(-?\w+),\s*(-?\w+),\s*("(?:[^"\\]|\\.)*")\)')
for m in pattern.finditer(text):
    name, typ, default, choices, lo, hi, doc = m.groups()
    name = json.loads(name)
    if name in decl:
        problems.append(f"{name}: declared twice")
    big = {"INT64_MAX": 2**63 - 1}
    decl[name] = dict(type=typ, default=json.loads(default), choices=json.loads(choices),
                      lo=big.get(lo, None) if lo in big else int(lo), hi=big[hi] if hi in big else int(hi), doc=json.loads(doc))
    if not decl[name]["doc"].strip():
        problems.append(f"{name}: no doc line")
declared_count = text.count("BMQ_CONFIG_KEY (") - 1     # the header comment names the macro once
if len(decl) != declared_count:
    problems.append(f"{declared_count} BMQ_CONFIG_KEY lines, {len(decl)} parsed: fix the pattern or the line")
# issue 31: the endpoints of common/service_registry.def are keys too (config_check.c), default tcp://127.0.0.1:PORT+i
registry = open(os.path.join(src, "common/service_registry.def"), encoding="utf-8").read()
for eps, port in re.findall(r'BINDS \("([^"]*)", (\d+)\)', registry):
    for i, ep in enumerate(eps.split()):
        name = ep.split("=")[0]
        decl.setdefault(name, dict(type="STR", default=f"tcp://127.0.0.1:{int(port) + i}", choices="", lo=0, hi=0, doc="(registry)"))

defaults = yaml.safe_load(open(os.path.join(src, "deploy/blendmq.yaml"), encoding="utf-8"))
in_yaml = {}
for section, table in defaults.items():
    for key, value in table.items():
        in_yaml[f"{section}.{key}"] = value

for name in sorted(set(in_yaml) - set(decl)):
    problems.append(f"{name}: in deploy/blendmq.yaml, not declared in common/config_keys.def")
for name in sorted(set(decl) - set(in_yaml)):
    problems.append(f"{name}: declared, but deploy/blendmq.yaml has no default for it")

for name in sorted(set(decl) & set(in_yaml)):
    d, v = decl[name], in_yaml[name]
    t = d["type"]
    if t == "BOOL":
        ok = isinstance(v, bool) and d["default"] == ("true" if v else "false")
    elif t == "INT":
        ok = isinstance(v, int) and not isinstance(v, bool) and str(v) == d["default"]
        if ok and not d["lo"] <= v <= d["hi"]:
            problems.append(f"{name}: default {v} outside its range {d['lo']}..{d['hi']}")
    elif t == "MAP":
        ok = isinstance(v, dict) and d["default"] == "{}"
    elif t == "ENUM":
        ok = isinstance(v, str) and v == d["default"]
        if ok and v not in d["choices"].split("|"):
            problems.append(f"{name}: default {v!r} is not one of {d['choices']}")
    else:
        ok = isinstance(v, str) and v == d["default"]
    if not ok:
        problems.append(f"{name}: declared {t} {d['default']!r}, deploy/blendmq.yaml says {v!r}")

read = re.compile(r'bmq_config_(?:str|int|bool|json|set|set_json)\s*\(\s*[\w>.\-]+\s*,\s*"([a-z_0-9]+\.[a-z_0-9.]+)"')
used = {}
for top in ("services", "common"):
    for root, _, files in os.walk(os.path.join(src, top)):
        for f in files:
            if f.endswith((".c", ".h")):
                path = os.path.join(root, f)
                for m in read.finditer(open(path, encoding="utf-8", errors="replace").read()):
                    used.setdefault(m.group(1), os.path.relpath(path, src))
for name in sorted(set(used) - set(decl)):
    problems.append(f"{name}: read in {used[name]}, not declared in common/config_keys.def")

if problems:
    print("\n".join(problems))
    print(f"{len(problems)} problem(s)")
    sys.exit(1)
print(f"ok: {len(decl)} keys declared, each with its default in deploy/blendmq.yaml; {len(used)} read in code, all declared")
