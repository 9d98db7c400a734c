#!/usr/bin/python3
"""cli.messages (issue 29): every mistake a newcomer makes gets one exact
answer and exit code, with no stack running:

  - an unknown command or subcommand: one line naming it (and the closest
    command), then a short usage, never the whole help;
  - no prompt, an empty one, one over 16,000 bytes;
  - no stack in the run dir; a stack that was stopped (said at once, from its
    files and sockets, not after a time-out); a revoked key by name;
  - `config check` with one error of each kind (unknown key, type, choice,
    range, YAML syntax at the quote that opened it), each at its line and
    column; `up` with that configuration refuses in well under a second and
    starts nothing.

Usage: test_cli_messages.py BIN_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BIN = os.path.join(sys.argv[1], "blendmq")
failures = []


def run(args, env=None, timeout=30):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("BLENDMQ_"):
            del e[k]
    e.update(env or {})
    t0 = time.monotonic()
    p = subprocess.run([BIN] + args, capture_output=True, text=True, env=e, timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def expect(name, args, code, first_line, env=None, max_lines=None, max_s=None, stdout=None):
    rc, out, err, took = run(args, env)
    lines = err.splitlines()
    problems = []
    if rc != code:
        problems.append(f"exit {rc}, expected {code}")
    if first_line is not None and (not lines or lines[0] != first_line):
        problems.append(f"first line {lines[0] if lines else '(none)'!r}, expected {first_line!r}")
    if max_lines is not None and len(lines) > max_lines:
        problems.append(f"{len(lines)} lines on stderr, at most {max_lines}")
    if max_s is not None and took > max_s:
        problems.append(f"took {took:.2f} s, at most {max_s}")
    if stdout is not None and out != stdout:
        problems.append(f"stdout {out!r}, expected {stdout!r}")
    if problems:
        failures.append(name)
        print(f"FAIL  {name}: " + "; ".join(problems) + f"\n      stderr: {err!r}")
    else:
        print(f"ok    {name}: exit {rc} in {took * 1000:.0f} ms: {lines[0] if lines else out.strip()!r}")
    return rc, out, err


work = tempfile.mkdtemp(prefix="bmq-cli-")
try:
    empty = os.path.join(work, "empty")
    os.mkdir(empty, 0o700)
    R = ["--run-dir", empty]

    # --- typos and missing words -----------------------------------------------------------
    expect("unknown command", R + ["chta"], 2, "blendmq: unknown command 'chta' (did you mean 'chat'?)", max_lines=6)
    expect("unknown command, nothing close", R + ["frobnicate"], 2, "blendmq: unknown command 'frobnicate'", max_lines=6)
    expect("unknown subcommand", R + ["scene", "explode"], 2, "blendmq: unknown command 'scene explode'", max_lines=10)
    expect("subcommand typo", R + ["plan", "rnu", "x.json"], 2,
           "blendmq: unknown command 'plan rnu' (did you mean 'plan run'?)", max_lines=6)
    expect("missing subcommand", R + ["plan"], 2, "blendmq: 'plan' needs one of: validate run", max_lines=6)
    expect("chat without a prompt", R + ["chat"], 2, 'blendmq: say what to build, e.g. blendmq chat "a red chair"', max_lines=1)
    expect("chat with an empty prompt", R + ["chat", ""], 2, 'blendmq: say what to build, e.g. blendmq chat "a red chair"',
           max_lines=1)
    expect("chat with a blank prompt", R + ["chat", "  \n"], 2, 'blendmq: say what to build, e.g. blendmq chat "a red chair"',
           max_lines=1)
    expect("chat with 16001 bytes", R + ["chat", "a" * 16001], 2, "blendmq: the prompt is 16001 bytes; at most 16000", max_lines=1)
    expect("cancel without a plan", R + ["cancel"], 2,
           "blendmq: cancel needs a plan id or --all-mine (usage: blendmq cancel PLAN_ID | SCRIPT_ID | --all-mine)", max_lines=1)
    expect("watch with an empty plan id", R + ["watch", ""], 2,
           "blendmq: '' is not a plan id (usage: blendmq watch [PLAN_ID])", max_lines=1)

    # --- no stack, a stopped stack, a revoked key ---------------------------------------------
    none = f"blendmq: no blendmq stack in {empty}: start one with `blendmq up`"
    plan = os.path.join(work, "plan.json")
    with open(plan, "w") as f:
        f.write('[{"operation": "bpy.ops.mesh.primitive_cube_add", "params": {}}]')
    for cmd in (["status"], ["chat", "a red ball"], ["plan", "run", plan], ["plan", "validate", plan], ["watch"], ["watch", "p-1"],
                ["cancel", "--all-mine"], ["scene"], ["audit", "list"], ["web"]):     # (`mcp` starts a stack itself)
        expect("no stack: " + " ".join(cmd), R + cmd, 2, none, max_lines=1, max_s=2)

    stopped = os.path.join(work, "stopped")
    os.mkdir(stopped, 0o700)
    with open(os.path.join(stopped, "blendmq.yaml"), "w") as f:     # what `down` leaves: the files, no processes
        f.write(f"gateway:\n  endpoint: ipc://{stopped}/gateway.sock\n  events: ipc://{stopped}/gateway-events.sock\n")
    os.mkdir(os.path.join(stopped, "pids"), 0o700)
    rc, _, _, _ = run(["--run-dir", stopped, "keys", "init"])
    assert rc == 0, "keys init failed"
    said = (f"blendmq: the blendmq stack in {stopped} is stopped (no gateway at ipc://{stopped}/gateway.sock):"
            " start it with `blendmq up`")
    for cmd in (["status"], ["chat", "a red ball"], ["scene"]):
        expect("stopped stack: " + " ".join(cmd), ["--run-dir", stopped] + cmd, 2, said, max_lines=1, max_s=1.0)

    rc, _, err, _ = run(["--run-dir", stopped, "keys", "add-client", "bob", "--role", "operator"])
    assert rc == 0, err
    rc, _, err, _ = run(["--run-dir", stopped, "keys", "revoke", "bob"])
    assert rc == 0, err
    revoked = ("blendmq: key bob was revoked (`blendmq keys list` shows the keys; a new one:"
               " `blendmq keys add-client NAME --role ROLE`)")
    expect("revoked key: status", ["--run-dir", stopped, "--key", "bob", "status"], 2, revoked, max_lines=1)
    expect("revoked key: chat", ["--run-dir", stopped, "--key", "bob", "chat", "a ball"], 2, revoked, max_lines=1)
    rc, out, _, _ = run(["--run-dir", stopped, "keys", "list"])
    head = out.splitlines()[0].split() if out else []
    rows = [l.split() for l in out.splitlines()[1:]]
    if head[:4] != ["NAME", "ROLE", "TRUSTED", "TOKEN"] or ["cli", "admin", "yes", "yes"] not in [r[:4] for r in rows] \
            or any(r[0] == "bob" and r[2] == "yes" for r in rows):
        failures.append("keys list")
        print(f"FAIL  keys list: no NAME ROLE TRUSTED TOKEN columns, cli not trusted, or bob still trusted:\n{out}")
    else:
        print("ok    keys list: NAME ROLE TRUSTED TOKEN columns (cli: admin yes yes; bob not trusted)")

    # --- configuration: one error of each kind ---------------------------------------------
    bad = os.path.join(work, "bad.yaml")
    with open(bad, "w") as f:
        f.write("planner:\n"
                "  backend: offlin\n"          # 2: not one of its choices
                "heartbeat:\n"
                "  liveness: 0\n"              # 4: out of range
                "  interval_ms: fast\n"        # 5: wrong type
                "log:\n"
                "  levle: info\n")             # 7: unknown key
    want = ["blendmq: 4 configuration problems:",
            f"  {bad}:7:3: unknown key 'log.levle'",
            f"  {bad}:5:16: heartbeat.interval_ms: wrong type: expected an integer, not \"fast\"",
            f"  {bad}:4:13: heartbeat.liveness: 0 is out of range 1..100",
            f"  {bad}:2:12: planner.backend: 'offlin' is not one of auto, offline, gemini, openai"]
    rc, out, err, _ = run(["config", "check", bad])
    if rc != 1 or sorted(err.splitlines()) != sorted(want):
        failures.append("config check: each kind")
        print(f"FAIL  config check: exit {rc}, stderr:\n{err}\nexpected:\n" + "\n".join(want))
    else:
        print(f"ok    config check: exit 1, every problem at its line and column:\n{err.rstrip()}")

    syntax = os.path.join(work, "syntax.yaml")
    with open(syntax, "w") as f:
        f.write('log:\n  level: "info\nplanner:\n  backend: auto\n\n\n')      # the quote opened on line 2 never closes
    expect("config check: YAML syntax", ["config", "check", syntax], 1, "blendmq: 1 configuration problem:")
    rc, _, err, _ = run(["config", "check", syntax])
    if "YAML syntax error at line 2 column 10" not in err:
        failures.append("config check: YAML line")
        print(f"FAIL  the unclosed quote is not said at line 2 column 10: {err!r}")
    else:
        print("ok    config check: the unclosed quote at line 2 column 10")
    good = os.path.join(work, "good.yaml")
    with open(good, "w") as f:
        f.write("planner:\n  backend: offline\nheartbeat:\n  liveness: 5\n")
    expect("config check: valid", ["config", "check", good], 0, None, stdout=f"{good}: valid (109 keys declared)\n")
    rc, out, err, _ = run(["config", "check", good], env={"BLENDMQ_PLANNER_BACKEND": "offlin"})
    want = "blendmq: 1 configuration problem:\n  planner.backend (from BLENDMQ_PLANNER_BACKEND): 'offlin' is not one of auto, offline, gemini, openai\n"
    if rc != 1 or err != want:
        failures.append("config check: environment")
        print(f"FAIL  config check with BLENDMQ_PLANNER_BACKEND=offlin: exit {rc}: {err!r}")
    else:
        print("ok    config check: an environment override is named as where the value came from")
    envup = os.path.join(work, "envup")
    os.mkdir(envup, 0o700)
    expect("up with BLENDMQ_PLANNER_BACKEND=offlin", ["--run-dir", envup, "up", "--ipc"], 2,
           "blendmq: 1 configuration problem; nothing was started:", env={"BLENDMQ_PLANNER_BACKEND": "offlin"}, max_s=2)

    rc, out, err, _ = run(["--json", "config", "keys"])
    keys = [json.loads(l) for l in out.splitlines() if l.strip()] if rc == 0 else []
    backend = [k for k in keys if k["key"] == "planner.backend"]
    if len(keys) != 109 or not backend or backend[0]["allowed"] != "auto|offline|gemini|openai" or backend[0]["default"] != "auto":
        failures.append("config keys")
        print(f"FAIL  config keys: {len(keys)} keys, planner.backend {backend}")
    else:
        print("ok    config keys: 109 keys from the declaration (planner.backend: choice auto|offline|gemini|openai, default auto)")

    upd = os.path.join(work, "up")
    os.mkdir(upd, 0o700)
    expect("up with a bad configuration", ["--run-dir", upd, "--config", bad, "up", "--ipc"], 2,
           "blendmq: 4 configuration problems; nothing was started:", max_s=2)
    if os.path.exists(os.path.join(upd, "pids", "supervisor.pid")) or os.path.exists(os.path.join(upd, "blendmq.yaml")):
        failures.append("up started something")
        print("FAIL  up with a bad configuration left a supervisor or a configuration behind")
finally:
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print(f"{len(failures)} failure(s): {', '.join(failures)}")
    sys.exit(1)
print("all messages as expected")
