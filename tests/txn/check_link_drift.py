"""The Blender link and the sandbox protocol are declared once (proto/blender_link.json,
proto/sandbox.json) and generated for both sides (proto/gen_protocols.py). This fails when code
drifts from the declaration where the generator cannot reach it:

  * the C side keeps no hand-written copy: blender_link.c checks the hello report with the
    generated bmq_link_*_fields tables and takes version, labels and limits from
    bmq_link_proto.h; executor_service.c forwards the commands marked "forward" (no list);
  * the add-on keeps no copy: protocol.py and tokens.py take their constants and field names
    from link_proto, commands.py implements exactly the declared commands (also checked when
    the add-on loads) and takes READ_ONLY / NO_DEADLINE from link_proto;
  * every command name the executor sends (blender_actor.c, executor_plan.c, script_jobs.c,
    executor_service.c) is declared, and the arguments it packs for plan_begin, run_step and
    run_script are declared arguments (plan_begin: exactly them);
  * transaction.py writes every report, open_plan and rollback field the tables declare;
  * the sandbox pool sends exactly the declared job fields, and the runner writes only declared
    result fields and verdicts.

Usage: python3 check_link_drift.py SOURCE_DIR   (exit 0 in step, 1 drifted)
"""
import ast
import json
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "."
ADDON = SRC + "/services/executor/addon/blendmq/"
EXECUTOR = SRC + "/services/executor/"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def string_literals(text):
    return {n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def dict_keys(text, name):
    """The string keys of the dict literal assigned to `name` at module level, or None."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                and isinstance(node.value, ast.Dict):
            return [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    return None


def literal_assignments(text, suffix):
    """Module-level NAME = (literal tuple/list of strings) whose name ends with suffix."""
    out = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)) \
                and any(isinstance(t, ast.Name) and t.id.endswith(suffix) for t in node.targets) \
                and node.value.elts and all(isinstance(e, ast.Constant) for e in node.value.elts):
            out.append(node.targets[0].id)
    return out


def packed_keys(pack_args):
    """The keys of a json_pack argument list: every "name", that is followed by a value."""
    return re.findall(r'"([a-z_0-9]+)",\s*(?!")', pack_args)


def main():
    link = json.loads(read(SRC + "/proto/blender_link.json"))
    sandbox = json.loads(read(SRC + "/proto/sandbox.json"))
    commands = link["commands"]
    tables = link["hello_report"]["tables"]
    problems = []

    # ---- the C side takes the declaration's tables (the report checks live in blender_link_report.c)
    link_c = read(EXECUTOR + "blender_link.c")
    report_c = read(EXECUTOR + "blender_link_report.c")
    for name, text in (("blender_link.c", link_c), ("blender_link_report.c", report_c)):
        if re.search(r"static const \w+ s_\w+_fields\[\]", text):
            problems.append("%s has a hand-written field table again" % name)
    for t in tables:
        if "bmq_link_%s_fields" % t not in report_c and not any(f.get("fields") == t for fs in tables.values() for f in fs):
            problems.append("blender_link_report.c does not use the generated table bmq_link_%s_fields" % t)
    if "bmq_link_hello_fields" not in report_c or "bmq_link_hello_report_check" not in link_c:
        problems.append("the hello reply is not checked with bmq_link_hello_fields (blender_link_report.c)")
    for macro in ("BMQ_LINK_VERSION", "BMQ_LINK_NONCE_BYTES", "BMQ_LINK_CLIENT_LABEL", "BMQ_LINK_SERVER_LABEL",
                  "BMQ_LINK_MAX_JSON", "BMQ_LINK_MAX_BLOB"):
        if macro not in link_c:
            problems.append("blender_link.c does not use %s" % macro)
    m = re.search(r'json_t \*args = json_pack \("[^"]*", (.*?)\);\n(.*?)\n', link_c, re.S)
    hello = set(packed_keys(m.group(1))) | set(re.findall(r'json_object_set \(args, "([a-z_]+)"', m.group(2))) if m else set()
    if hello != set(link["handshake"]["hello"]["args"]):
        problems.append("blender_link.c sends hello with %s, the declaration says %s"
                        % (sorted(hello), sorted(link["handshake"]["hello"]["args"])))
    if re.search(r'#define\s+BMQ_LINK_MAX_(JSON|BLOB)\b', read(EXECUTOR + "blender_link.h")):
        problems.append("blender_link.h defines the frame limits itself")
    svc = read(EXECUTOR + "executor_service.c")
    forward = [n for n, c in commands.items() if c.get("forward")]
    if "bmq_link_command (" not in svc or re.search(r'"%s",\s*"%s"' % (forward[0], forward[1]), svc):
        problems.append("executor_service.c keeps its own list of forwardable commands")

    # ---- every command the executor sends is declared, with declared arguments
    sent = set()
    for name in ("blender_actor.c", "executor_plan.c", "script_jobs.c", "executor_service.c"):
        text = read(EXECUTOR + name)
        sent |= set(re.findall(r'bmq_blender_link_call \([^,]+, "([a-z_]+)"', text))
        sent |= set(re.findall(r'cmd = "([a-z_]+)"', text))
        sent |= set(re.findall(r's_command \([^,]+, [A-Z_]+, "([a-z_]+)"', text))
        sent |= set(re.findall(r'"command", "([a-z_]+)"', text))
    sent.discard("hello")
    for cmd in sorted(sent - set(commands)):
        problems.append("the executor sends %s, which proto/blender_link.json does not declare" % cmd)
    if not {"run_step", "plan_begin", "plan_commit", "plan_rollback", "ping", "interrupted_ack", "run_script"} <= sent:
        problems.append("the drift check no longer finds the executor's commands (found %s)" % sorted(sent))
    plan_c = read(EXECUTOR + "executor_plan.c")
    m = re.search(r'cmd = "plan_begin";\s*args = json_pack \("[^"]*", (.*?)\);', plan_c, re.S)
    begin = tuple(packed_keys(m.group(1))) if m else None
    if begin != tuple(commands["plan_begin"]["args"]):
        problems.append("executor_plan.c sends plan_begin with %s, the declaration says %s"
                        % (begin, tuple(commands["plan_begin"]["args"])))
    m = re.search(r'args = json_pack \("\{s:o, s:s\}", (.*?)\);', plan_c, re.S)
    step_keys = packed_keys(m.group(1)) if m else None
    if not step_keys or set(step_keys) - set(commands["run_step"]["args"]):
        problems.append("executor_plan.c sends run_step with %s, not all declared" % step_keys)
    jobs_c = read(EXECUTOR + "script_jobs.c")
    m = re.search(r'json_t \*args = json_pack \("[^"]*", (.*?)\);(.{0,400}?)zlistx_add_(?:start|end) \(queue, '
                  r's_command \(run, BMQ_MSG_SCRIPT_CONFIRM, "run_script"', jobs_c, re.S)
    # the packed arguments, and any set on args before it is queued (json_object_set (args, "k", ...))
    script_keys = packed_keys(m.group(1)) + re.findall(r'json_object_set(?:_new)? \(args, "([a-z_]+)"', m.group(2)) \
        if m else None
    if not script_keys or set(script_keys) - set(commands["run_script"]["args"]):
        problems.append("script_jobs.c sends run_script with %s, not all declared" % script_keys)

    # ---- the add-on takes the declaration's
    proto_py = read(ADDON + "protocol.py")
    for name in literal_assignments(proto_py, "_FIELDS"):
        problems.append("protocol.py spells out %s again (take it from link_proto)" % name)
    if re.search(r"^(LINK_VERSION|MAX_JSON|MAX_BLOB|PREAUTH_MAX_JSON) = \d", proto_py, re.M):
        problems.append("protocol.py spells out a link constant again")
    if re.search(r'^(NONCE_BYTES = \d|CLIENT_LABEL = b"|SERVER_LABEL = b")', read(ADDON + "tokens.py"), re.M):
        problems.append("tokens.py spells out the handshake's constants again")
    cmds_py = read(ADDON + "commands.py")
    table = dict_keys(cmds_py, "COMMANDS")
    if table is None or set(table) != set(commands):
        problems.append("commands.py's COMMANDS %s != declared %s" % (sorted(table or []), sorted(commands)))
    if "check_table(COMMANDS)" not in cmds_py or "link_proto.check_args" not in cmds_py:
        problems.append("commands.py no longer checks its table or the arguments against the declaration")
    if re.search(r"(READ_ONLY|NO_DEADLINE) = frozenset\(\(", cmds_py):
        problems.append("commands.py spells out READ_ONLY / NO_DEADLINE again")
    literals = string_literals(read(ADDON + "transaction.py"))
    for t, fields in tables.items():
        missing = [f["name"] for f in fields if f["name"] not in literals]
        if missing:
            problems.append("transaction.py never names the %s fields %s" % (t, missing))
    for f in commands["plan_begin"]["args"]:
        if f not in literals:
            problems.append("transaction.py never reads plan_begin's %s" % f)

    # ---- the sandbox protocol
    pool_c = read(EXECUTOR + "sandbox_pool.c")
    m = re.search(r'json_t \*req = json_pack \("[^"]*", (.*?)\);', pool_c, re.S)
    job = set(packed_keys(m.group(1))) if m else set()
    job |= set(re.findall(r'json_object_set_new \(req, "([a-z_]+)"', pool_c))
    if job != set(sandbox["job"]):
        problems.append("sandbox_pool.c sends the job fields %s, proto/sandbox.json declares %s"
                        % (sorted(job), sorted(sandbox["job"])))
    runner = read(EXECUTOR + "sandbox/sandbox_runner.py")
    written = set(re.findall(r'result\["([a-z_]+)"\]', runner)) | set(re.findall(r'"([a-z_]+)": job\.get\("nonce"\)', runner))
    for key in sorted(written - set(sandbox["result"])):
        problems.append("sandbox_runner.py writes result field %s, which proto/sandbox.json does not declare" % key)
    verdicts = set(re.findall(r'"verdict"\]?[,:]?\s*=?\s*"([a-z]+)"', runner)) | set(re.findall(r'result\["verdict"\](?:, result\["ok"\])? = "([a-z]+)"', runner))
    for v in sorted(verdicts - set(sandbox["verdicts"]["runner"])):
        problems.append("sandbox_runner.py gives verdict %s, which proto/sandbox.json does not declare" % v)
    if "link_proto.check_args(link_proto.SANDBOX_JOB" not in runner:
        problems.append("sandbox_runner.py no longer checks the job against the declaration")

    for p in problems:
        print("drift: " + p)
    print("link protocol in step with proto/" if not problems else "%d drift(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
