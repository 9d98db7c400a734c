"""The Blender link's interrupted-plan fields are written twice, in Python (the add-on,
services/executor/addon/blendmq/protocol.py and transaction.py) and in C (blender_link.c's
field tables, executor_plan.c's plan_begin). This fails when the two drift apart:

  * each C table (s_hello_fields, s_report_fields, s_open_plan_fields, s_rollback_fields) names
    exactly the fields of its protocol.py tuple, in the same order;
  * transaction.py writes every report, open_plan and rollback field it declares (a string
    literal of each), and its hello_fields() the hello's;
  * executor_plan.c sends plan_begin with exactly PLAN_BEGIN_FIELDS, and transaction.py
    reads each of them.

Usage: python3 check_link_drift.py SOURCE_DIR   (exit 0 in step, 1 drifted)
"""
import ast
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "."
ADDON = SRC + "/services/executor/addon/blendmq/"
EXECUTOR = SRC + "/services/executor/"
PAIRS = {"HELLO_REPORT_FIELDS": "s_hello_fields", "REPORT_FIELDS": "s_report_fields",
         "OPEN_PLAN_FIELDS": "s_open_plan_fields", "ROLLBACK_FIELDS": "s_rollback_fields"}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def python_tuples(text):
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.endswith("_FIELDS"):
                out[name] = tuple(ast.literal_eval(node.value))
    return out


def c_table(text, name):
    m = re.search(r"static const s_field_t %s\[\] = \{(.*?)\{ NULL \}" % re.escape(name), text, re.S)
    if not m:
        return None
    return tuple(re.findall(r'\{ "([a-z_]+)",', m.group(1)))


def string_literals(text):
    return {n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def main():
    problems = []
    py = python_tuples(read(ADDON + "protocol.py"))
    link_c = read(EXECUTOR + "blender_link.c")
    for py_name, c_name in PAIRS.items():
        if py_name not in py:
            problems.append("protocol.py has no %s" % py_name)
            continue
        c = c_table(link_c, c_name)
        if c is None:
            problems.append("blender_link.c has no field table %s" % c_name)
        elif c != py[py_name]:
            problems.append("%s %s != blender_link.c %s %s" % (py_name, py[py_name], c_name, c))
    literals = string_literals(read(ADDON + "transaction.py"))
    for name in ("HELLO_REPORT_FIELDS", "REPORT_FIELDS", "OPEN_PLAN_FIELDS", "ROLLBACK_FIELDS", "PLAN_BEGIN_FIELDS"):
        missing = [f for f in py.get(name, ()) if f not in literals]
        if missing:
            problems.append("transaction.py never names %s fields %s" % (name, missing))
    svc = read(EXECUTOR + "executor_plan.c")
    m = re.search(r'cmd = "plan_begin";\s*args = json_pack \("[^"]*", (.*?)\);', svc, re.S)
    sent = tuple(re.findall(r'"([a-z_]+)", ', m.group(1))) if m else None
    if sent != py.get("PLAN_BEGIN_FIELDS"):
        problems.append("executor_plan.c sends plan_begin with %s, protocol.py says %s"
                        % (sent, py.get("PLAN_BEGIN_FIELDS")))
    for text in (read(ADDON + "commands.py"), read(EXECUTOR + "blender_actor.c")):
        if "interrupted_ack" not in text:
            problems.append("interrupted_ack is missing on one side (commands.py / blender_actor.c)")
    for p in problems:
        print("drift: " + p)
    print("link protocol in step" if not problems else "%d drift(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
