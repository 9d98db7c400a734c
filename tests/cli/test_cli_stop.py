#!/usr/bin/python3
"""cli.stop (issue 29): Ctrl-C means stop, in a real stack (`up --ipc`, a
confined headless Blender).

  1. `plan run` of 40 spheres, one SIGINT once step 3 ran: it prints that it
     cancels the plan, waits for the end, exits 130; the plan ended
     "cancelled"; the scene's objects (each one's name, type, location,
     rotation, scale, dimensions, materials) and its fingerprint equal those
     before the run.
  2. the same with `chat`: a SIGINT while the plan runs.
  3. two SIGINTs: it leaves at once (exit 130) saying the plan may still be
     running and the exact `blendmq cancel PLAN_ID` that stops it; the plan is
     still rolled back (the scene after equals the scene before).
  4. `blendmq cancel --all-mine` from another process stops a running plan
     (exit 0, "cancelling plan p-… (executing)"), the plan's own client is told
     "cancelled"; `cancel --all-mine` and `cancel NO-SUCH` with nothing running
     exit 1 with their messages. Whose plan may be stopped: an agent's key
     (mcp) cannot cancel a person's plan; a person's key cancels an agent's.
  5. after `down`, `status` says at once the stack is stopped (exit 2, under
     a second); a process stopped for its configuration is not restarted:
     a planner whose file turned bad exits once (78) and stays down.

Usage: test_cli_stop.py BIN_DIR. Exit 77 without Blender or bubblewrap."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import stack_env  # noqa: E402

STACK = stack_env.Stack(sys.argv[1], "bmq-stop-", cli_timeout=120)
BIN, blender, work, R, env = STACK.bin, STACK.blender, STACK.work, STACK.run_dir, STACK.env
failures = STACK.failures
cli, check, scene, start, ended = STACK.cli, STACK.check, STACK.scene, STACK.start, STACK.ended


def wait_for_step(p, out, n, limit=60):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and p.poll() is None:
        out.seek(0)
        if f"step {n}/" in out.read():
            return True
        time.sleep(0.05)
    return False


try:
    rc, out, err = cli("up", "--ipc", "--validators", "1", timeout=180)
    if rc != 0:
        print(f"FAIL  up: exit {rc}\n{out}{err}")
        sys.exit(1)
    plan = os.path.join(work, "spheres.json")
    with open(plan, "w") as f:
        json.dump([{"operation": "bpy.ops.mesh.primitive_uv_sphere_add",
                    "params": {"segments": 64, "ring_count": 32, "location": [i * 3, 5, 0]}} for i in range(40)], f)
    # one numbering: validation errors count steps from 1; a whole-plan problem has no step
    bad = os.path.join(work, "bad-step.json")
    with open(bad, "w") as f:
        json.dump([{"operation": "bpy.ops.mesh.primitive_cube_add"}, {"operation": "bpy.ops.wm.quit_blender"}], f)
    rc, out, err = cli("plan", "validate", bad)
    errors = json.loads(out)["errors"] if rc == 1 and out.strip() else []
    check("plan validate: the second step's error is step 2", rc == 1 and errors and errors[0].get("step") == 2, out.strip()[:300])
    with open(bad, "w") as f:
        json.dump([{"operation": "bpy.ops.mesh.primitive_cube_add"}] * 201, f)
    rc, out, err = cli("plan", "validate", bad)
    errors = json.loads(out)["errors"] if rc == 1 and out.strip() else []
    check("plan validate: a whole-plan error has no step", rc == 1 and errors and all("step" not in e for e in errors)
          and all(e.get("step", 1) >= 1 for e in errors), out.strip()[:300])
    cli("scene", "reset")
    rc, out, err = cli("chat", "a red ball")
    check("a scene to keep (chat 'a red ball')", rc == 0, out.strip().splitlines()[-1] if out.strip() else err)
    before = scene()

    # 1. plan run, one Ctrl-C
    p, out, err = start("plan", "run", plan)
    ran = wait_for_step(p, out, 3)
    p.send_signal(signal.SIGINT)
    rc, o, e = ended(p, out, err)
    check("plan run: step 3 reached before Ctrl-C", ran, o[-200:])
    check("plan run + Ctrl-C: exit 130", rc == 130, f"exit {rc}")
    check("plan run + Ctrl-C: says it cancels the plan", "blendmq: cancelling plan p-" in e and "(Ctrl-C again: leave without waiting)" in e, e.strip())
    check("plan run + Ctrl-C: the plan ended cancelled", "\ncancelled: " in "\n" + o and "rolled back: removed" in o, o.strip().splitlines()[-1] if o.strip() else "")
    after = scene()
    check("plan run + Ctrl-C: the scene's objects equal those before", after[0] == before[0],
          f"{len(before[0])} objects before, {len(after[0])} after")
    check("plan run + Ctrl-C: the scene's fingerprint equals the one before", after[1] == before[1], f"{before[1][:12]} / {after[1][:12]}")

    # 2. chat, one Ctrl-C while its plan runs
    # a room: about 90 steps, so the Ctrl-C lands while it runs even in a sanitizer build
    p, out, err = start("chat", "a bedroom")
    ran = wait_for_step(p, out, 2)
    p.send_signal(signal.SIGINT)
    rc, o, e = ended(p, out, err)
    after = scene()
    if not ran:
        print(f"note  chat ended before its second step was seen: {o[-200:]!r}")
    check("chat + Ctrl-C: exit 130", rc == 130 or not ran, f"exit {rc}: {o.strip().splitlines()[-1] if o.strip() else e.strip()}")
    check("chat + Ctrl-C: the scene's objects equal those before", after[0] == before[0] or not ran,
          f"{len(before[0])} objects before, {len(after[0])} after")
    if after[0] != before[0]:
        before = after                  # what follows compares with the scene as it is now (one failure, not a cascade)

    # 3. two Ctrl-Cs: leave at once, say how to cancel
    p, out, err = start("plan", "run", plan)
    ran = wait_for_step(p, out, 3)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    rc, o, e = ended(p, out, err)
    took = time.monotonic() - t0
    check("two Ctrl-Cs: exit 130 at once", rc == 130 and took < 3, f"exit {rc} after {took:.2f} s")
    line = [l for l in e.splitlines() if l.startswith("blendmq: left without waiting")]
    pid = line[0].split("plan ")[1].split(" ")[0] if line else ""
    # the first Ctrl-C's cancel may be answered before the second is read: then the run says
    # how it ended instead (both exit 130; never killed by the second signal)
    done = [l for l in e.splitlines() if l.startswith("blendmq: plan ") and l.endswith(" cancelled")]
    check("two Ctrl-Cs: says the plan may still run and how to cancel it (or that it was cancelled)",
          (bool(line) and line[0] == f"blendmq: left without waiting: plan {pid} may still be running; cancel it with `blendmq cancel {pid}`")
          or bool(done), line[0] if line else e.strip())
    for _ in range(100):                        # the first Ctrl-C's cancel still stops it
        after = scene()
        if after[0] == before[0]:
            break
        time.sleep(0.2)
    check("two Ctrl-Cs: the plan was still rolled back", after[0] == before[0], f"{len(after[0])} objects")

    # 4. blendmq cancel
    p, out, err = start("plan", "run", plan)
    ran = wait_for_step(p, out, 3)
    rc, co, ce = cli("cancel", "--all-mine")
    r2, o, e = ended(p, out, err)
    check("cancel --all-mine: exit 0, names the plan", rc == 0 and co.startswith("cancelling plan p-") and "(executing)" in co, (co + ce).strip())
    check("cancel --all-mine: the run ends cancelled", r2 == 1 and "\ncancelled: " in "\n" + o, f"exit {r2}: {o.strip().splitlines()[-1] if o.strip() else e}")
    rc, co, ce = cli("cancel", "--all-mine")
    check("cancel --all-mine, nothing running: exit 1", rc == 1 and ce.strip() == "blendmq: none of your plans is in progress", ce.strip())
    rc, co, ce = cli("cancel", "p-nosuch")
    check("cancel p-nosuch: exit 1", rc == 1 and ce.strip() == "blendmq: no plan p-nosuch is in progress (it ended, or never started)", ce.strip())
    after = scene()
    check("after every cancel: the scene equals the one before", after[0] == before[0], f"{len(after[0])} objects")

    # the add-on panel's Cancel: the same request its operator sends, from inside Blender
    long_plan = os.path.join(work, "long.json")
    with open(long_plan, "w") as f:
        json.dump([{"operation": "bpy.ops.mesh.primitive_uv_sphere_add",
                    "params": {"segments": 64, "ring_count": 32, "location": [i * 3, 9, 0]}} for i in range(200)], f)
    p, out, err = start("plan", "run", long_plan)
    wait_for_step(p, out, 3)
    rc, starts, _ = cli("audit", "list", "--all", "--json", "--kind", "plan.start", "--limit", "1")
    plan_id = json.loads(starts.splitlines()[-1]).get("plan_id") if rc == 0 and starts.strip() else None
    rc, web, _ = cli("web")
    base = web.strip().split("/?token=")[0]
    addon = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "services", "executor", "addon")
    b = subprocess.run([blender, "-b", "--factory-startup", "--python", os.path.join(os.path.dirname(os.path.abspath(__file__)), "panel_cancel.py"),
                        "--", addon, base, os.path.join(R, "keys", "panel.token"), plan_id or "none"],
                       capture_output=True, text=True, timeout=120)
    said = [l for l in b.stdout.splitlines() if l.startswith("PANEL: ")]
    r2, o, e = ended(p, out, err)
    check("the panel's Cancel: the gateway takes it", bool(said) and said[0] == f"PANEL: cancelling plan {plan_id}: it stops after its current step and is rolled back",
          said[0] if said else b.stdout[-300:] + b.stderr[-300:])
    check("the panel's Cancel: the plan ends cancelled, rolled back", r2 == 1 and "\ncancelled: " in "\n" + o and scene()[0] == before[0],
          o.strip().splitlines()[-1] if o.strip() else e)

    # whose plan may be stopped: its own key, or a person (a reviewer or admin key); an agent's
    # key (mcp: operator) cannot stop a person's plan, a person can stop an agent's
    def running_plan_id():
        rc, starts, _ = cli("audit", "list", "--all", "--json", "--kind", "plan.start", "--limit", "1")
        return json.loads(starts.splitlines()[-1]).get("plan_id") if rc == 0 and starts.strip() else None

    p, out, err = start("plan", "run", long_plan)
    wait_for_step(p, out, 3)
    pid_person = running_plan_id()
    rc, co, ce = cli("--key", "mcp", "cancel", pid_person or "none")
    check("an agent's key cannot cancel a person's plan", rc == 2 and f"plan {pid_person} was started by key 'cli': only that key or a person" in ce,
          f"exit {rc}: {(co + ce).strip()}")
    rc, co, ce = cli("cancel", pid_person or "none")
    r2, o, e = ended(p, out, err)
    check("the person's own key can, and the plan ends cancelled", rc == 0 and r2 == 1 and "\ncancelled: " in "\n" + o,
          f"cancel exit {rc}, run exit {r2}: {(co + ce).strip()}")
    p, out, err = start("--key", "mcp", "plan", "run", long_plan)
    wait_for_step(p, out, 3)
    pid_agent = running_plan_id()
    rc, co, ce = cli("cancel", pid_agent or "none")
    r2, o, e = ended(p, out, err)
    check("a person's key cancels an agent's plan", rc == 0 and r2 == 1 and "\ncancelled: " in "\n" + o and scene()[0] == before[0],
          f"cancel exit {rc}, run exit {r2}: {(co + ce).strip()} {o.strip().splitlines()[-1] if o.strip() else e}")

    # the audit for people: look-ups services made among themselves are left out unless --all;
    # numbers in their shortest form; an error's code said once
    rc, out, err = cli("audit", "list", "--limit", "0")
    rc1, out1, _ = cli("audit", "list", "--json", "--limit", "0")
    out += out1
    rc2, out2, _ = cli("audit", "list", "--all", "--json", "--limit", "0")
    check("audit list: people's requests, no look-ups", rc == 0 and "inspect.request" not in out and "chat.request" in out
          and "left out: --all shows them" in err, err.strip().splitlines()[-1] if err.strip() else "")
    check("audit list --all: the look-ups too", rc2 == 0 and "inspect.request" in out2, f"{len(out2.splitlines())} lines")
    rc, out, err = cli("audit", "list", "--json", "--kind", "plan.proposed")
    check("audit list: reals in their shortest form", rc == 0 and "0.8," in out and "0.80000000000000004" not in out, out[:200])
    rc, out, err = cli("audit", "list", "--all", "--json", "--kind", "request.end", "--limit", "0")
    ends = [json.loads(l) for l in out.splitlines() if l.strip()]
    lookups = [e for e in ends if e.get("data", {}).get("plan_id") is None]
    check("audit: a look-up's request.end carries no plan id", rc == 0 and len(lookups) > 0 and all("plan_id" not in e or e["plan_id"] is None for e in lookups),
          f"{len(lookups)} of {len(ends)} request.end records without a plan id")
    cli("keys", "add-client", "viewer1", "--role", "viewer")
    rc, out, err = cli("--key", "viewer1", "chat", "a ball")
    check("a refused request: its code said once", rc != 0 and err.startswith("blendmq: forbidden: ") and "forbidden: forbidden" not in err, err.strip())

    # small things: scene save and render say what they wrote; web --open without a browser fails
    blend, png = os.path.join(work, "s.blend"), os.path.join(work, "s.png")
    rc, out, err = cli("scene", "save", blend)
    check("scene save: says what it wrote", rc == 0 and out.startswith(f"wrote {blend} (") and os.path.getsize(blend) > 0, (out + err).strip())
    rc, out, err = cli("scene", "render", png)
    check("scene render: says what it wrote", rc == 0 and out.startswith(f"wrote {png} (") and os.path.getsize(png) > 0, (out + err).strip())
    env["BROWSER"] = "/bin/false"
    rc, out, err = cli("web", "--open")
    del env["BROWSER"]
    check("web --open with no browser: exit 1", rc == 1 and "could not open a browser" in err, f"exit {rc}: {err.strip()}")

    # 5a. a process stopped for its configuration is not restarted
    cfg = os.path.join(R, "blendmq.yaml")
    good = open(cfg).read()
    with open(cfg, "a") as f:
        f.write("\nbogus:\n  key: 1\n")
    pidfile = os.path.join(R, "pids", "planner.pid")
    old = int(open(pidfile).read().strip())
    os.kill(old, signal.SIGKILL)
    state = None
    for _ in range(100):
        time.sleep(0.1)
        try:
            doc = json.load(open(os.path.join(R, "supervisor.json")))
        except (OSError, ValueError):
            continue
        planner = [c for c in doc["children"] if c["name"] == "planner"]
        if planner and planner[0]["last_exit"] == "exited with code 78":
            state = planner[0]
            time.sleep(1.5)         # a restart loop would have started it again by now (200 ms back-off)
            state = [c for c in json.load(open(os.path.join(R, "supervisor.json")))["children"] if c["name"] == "planner"][0]
            break
    with open(cfg, "w") as f:
        f.write(good)
    rc, out, err = cli("status")
    check("a planner whose configuration went bad: exit 78, not started again",
          state is not None and state["state"] == "stopped" and state["restarts"] == 1, json.dumps(state))
    check("status says why the planner is stopped, in its own words",
          rc != 0 and "blendmq: planner cannot start: its configuration is not valid (not started again):" in err
          and "unknown key 'bogus'" in err, err.strip()[-400:])
finally:
    rc, _, _ = cli("down", timeout=60)
    t0 = time.monotonic()
    rc, o, e = cli("status")
    took = time.monotonic() - t0
    check("after down: status says at once that the stack is stopped",
          rc == 2 and e.strip() == f"blendmq: the blendmq stack in {R} is stopped (no gateway at ipc://{R}/gateway.sock): start it with `blendmq up`"
          and took < 1.0, f"exit {rc} in {took * 1000:.0f} ms: {e.strip()}")
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print(f"{len(failures)} failure(s): {', '.join(failures)}")
    sys.exit(1)
print("Ctrl-C and cancel stop plans; the scene is as it was")
