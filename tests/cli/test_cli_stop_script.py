#!/usr/bin/python3
"""cli.stop_script (issue 29): Ctrl-C means stop for `script apply` and `watch PLAN_ID`, in a
real stack (`up --ipc`, a confined headless Blender).

  1. `script apply` of a long live script (3 cubes, then a loop of several seconds), one
     SIGINT while it runs: it says it cancels the script, waits for the answer, exits 130;
     the answer is "cancelled" and says how it was rolled back (the 3 cubes removed, the
     fingerprint the one before); the scene's objects and fingerprint equal those before;
     the audit has script.cancel (who asked) and script.live with status cancelled.
  2. whose script may be stopped: an agent's key (mcp) cannot cancel a person's live script
     (exit 2, the key that started it named); the person's `blendmq cancel SCRIPT_ID` can
     (exit 0, "cancelling script …"), and the apply ends "cancelled" (exit 1: stopped from
     elsewhere), rolled back; so does `blendmq cancel --all-mine`.
  3. `watch PLAN_ID` on a running plan, one SIGINT: it cancels that plan and waits for its
     end (exit 130, "plan P cancelled"); the plan's own `plan run` ends cancelled; the
     scene equals the one before. `watch NO-SUCH` + SIGINT: "no plan … is in progress",
     exit 1. Plain `watch` + SIGINT only stops watching: the plan runs to its end (done).

Usage: test_cli_stop_script.py BIN_DIR. Exit 77 without Blender or bubblewrap."""
import json
import os
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import stack_env  # noqa: E402

STACK = stack_env.Stack(sys.argv[1], "bmq-stop-script-", cli_timeout=180)
BIN, blender, work, R, env = STACK.bin, STACK.blender, STACK.work, STACK.run_dir, STACK.env
failures = STACK.failures
cli, check, scene, start, ended = STACK.cli, STACK.check, STACK.scene, STACK.start, STACK.ended


def wait_for(f, text, p, limit=60):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and p.poll() is None:
        f.seek(0)
        if text in f.read():
            return True
        time.sleep(0.05)
    return False


def sandbox(path):
    """script sandbox: (script_id, sha256) of a script that may be applied, or (None, why)."""
    rc, out, err = cli("script", "sandbox", path, "--json", timeout=300)
    try:
        body = json.loads(out)
    except ValueError:
        return None, f"exit {rc}: {out[-300:]}{err[-300:]}"
    if rc != 0 or body.get("status") != "sandboxed":
        return None, f"exit {rc}: {json.dumps(body)[:400]} {err[-300:]}"
    return body["script_id"], body["sandbox"]["script_sha256"]


def audit(kind, script_id):
    rc, out, _ = cli("audit", "list", "--all", "--json", "--kind", kind, "--limit", "0")
    recs = [json.loads(l) for l in out.splitlines() if l.strip()] if rc == 0 else []
    return [r for r in recs if (r.get("data") or {}).get("script_id") == script_id]


try:
    rc, out, err = cli("up", "--ipc", "--validators", "1", timeout=180)
    if rc != 0:
        print(f"FAIL  up: exit {rc}\n{out}{err}")
        sys.exit(1)
    cli("scene", "reset")
    rc, out, err = cli("chat", "a red ball")
    check("a scene to keep (chat 'a red ball')", rc == 0, out.strip().splitlines()[-1] if out.strip() else err)
    before = scene()

    # a long live script: 3 cubes, then a loop of about LOOP_S seconds (it must end in the sandbox
    # too, within executor.script_timeout_ms, 20 s); live, Ctrl-C comes while it loops. The loop's
    # count comes from a sandbox run of a short one: the machine may be loaded or not.
    LOOP_S = 5.0

    def long_script(count):
        path = os.path.join(work, f"long-{count}.py")
        with open(path, "w") as f:
            f.write("import bpy\n"
                    "for i in range(3):\n"
                    "    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(i * 2, 8, 0))\n"
                    "n = 0\n"
                    f"while n < {count}:\n"
                    "    n = n + 1\n"
                    "print(n)\n")
        return path

    rc, out, err = cli("script", "sandbox", long_script(2000000), "--json", timeout=300)
    try:
        ms = float(json.loads(out)["sandbox"]["duration_ms"])
    except (ValueError, KeyError, TypeError):
        ms = 0
    count = int(2000000 * LOOP_S * 1000 / ms) if ms > 0 else 50000000
    count = max(5000000, min(count, 400000000))
    print(f"note  2,000,000 iterations took {ms:.0f} ms in the sandbox: {count:,} for about {LOOP_S:.0f} s")
    long_py = long_script(count)
    t0 = time.monotonic()
    script_id, sha = sandbox(long_py)
    sandbox_s = time.monotonic() - t0
    check("the long script passes the sandbox", script_id is not None, f"{sandbox_s:.1f} s; {sha if not script_id else ''}")
    print(f"note  the sandbox run took {sandbox_s:.1f} s")

    # 1. script apply, one Ctrl-C while it runs
    if script_id:
        p, out, err = start("script", "apply", script_id, "--confirm", "--sha256", sha, tag="apply1")
        time.sleep(1.5)
        running = p.poll() is None
        t_int = time.monotonic()
        p.send_signal(signal.SIGINT)
        rc, o, e = ended(p, out, err)
        took = time.monotonic() - t_int
        lines = e.strip().splitlines()
        check("script apply: still running when Ctrl-C came", running)
        check("script apply + Ctrl-C: exit 130", rc == 130, f"exit {rc}: {e.strip()[-300:]}")
        check("script apply + Ctrl-C: says it cancels the script",
              f"blendmq: cancelling script {script_id}: it is interrupted in Blender and what it did is rolled back"
              " (Ctrl-C again: leave without waiting)" in e, e.strip()[:300])
        said = [l for l in lines if l.startswith("blendmq: cancelled: ")]
        check("script apply + Ctrl-C: the answer says cancelled and how it was rolled back",
              bool(said) and said[0].startswith("blendmq: cancelled: the script was stopped ")
              and said[0].endswith("; rolled back: removed 3 object(s) the script made (Cube, Cube.001, Cube.002);"
                                   " the scene's fingerprint equals the one before"), said[0] if said else e.strip()[-300:])
        check("script apply + Ctrl-C: last line", bool(lines) and lines[-1] == f"blendmq: script {script_id} cancelled",
              lines[-1] if lines else "")
        try:
            status = json.loads(o).get("status")
        except ValueError:
            status = None
        check("script apply + Ctrl-C: the script.reply's status is cancelled", status == "cancelled", o[:200])
        check("script apply + Ctrl-C: it ended within 5 s of the Ctrl-C", took < 5, f"{took:.2f} s (the sandbox run took {sandbox_s:.1f} s)")
        after = scene()
        check("script apply + Ctrl-C: the scene's objects equal those before", after[0] == before[0],
              f"{len(before[0])} objects before, {len(after[0])} after")
        check("script apply + Ctrl-C: the scene's fingerprint equals the one before", after[1] == before[1],
              f"{before[1][:12]} / {after[1][:12]}")
        time.sleep(0.5)                 # the audit service has it by now
        cancels = audit("script.cancel", script_id)
        lives = audit("script.live", script_id)
        check("audit: script.cancel names who asked", len(cancels) == 1 and cancels[0]["data"].get("state") == "running"
              and cancels[0]["data"].get("cancelled_by", {}).get("key") == "cli", json.dumps(cancels)[:300])
        check("audit: script.live says cancelled", len(lives) == 1 and lives[0]["data"].get("status") == "cancelled",
              json.dumps(lives)[:300])
        if after[0] != before[0]:
            before = after

    # 2. whose script may be stopped
    script_id, sha = sandbox(long_py)
    check("the long script passes the sandbox again", script_id is not None, sha if not script_id else "")
    if script_id:
        p, out, err = start("script", "apply", script_id, "--confirm", "--sha256", sha, tag="apply2")
        time.sleep(1.5)
        rc, co, ce = cli("--key", "mcp", "cancel", script_id)
        check("an agent's key cannot cancel a person's script",
              rc == 2 and ce.strip() == f"blendmq: script {script_id} was started by key 'cli': only that key or a person "
                                        "(a reviewer or admin key) may cancel it", f"exit {rc}: {(co + ce).strip()}")
        rc, co, ce = cli("cancel", script_id)
        r2, o, e = ended(p, out, err)
        check("the person's own key can: blendmq cancel SCRIPT_ID",
              rc == 0 and co.strip() == f"cancelling script {script_id} (running live): it is interrupted in Blender and rolled back",
              f"exit {rc}: {(co + ce).strip()}")
        check("the apply ends cancelled (exit 1: stopped from elsewhere)",
              r2 == 1 and "blendmq: cancelled: the script was stopped " in e, f"exit {r2}: {e.strip()[-300:]}")
        after = scene()
        check("after the cancel: the scene equals the one before", after == before, f"{len(after[0])} objects")
        if after != before:
            before = after              # what follows compares with the scene as it is now

    # `cancel --all-mine` covers live scripts too
    script_id, sha = sandbox(long_py)
    if script_id:
        p, out, err = start("script", "apply", script_id, "--confirm", "--sha256", sha, tag="apply3")
        time.sleep(1.5)
        rc, co, ce = cli("cancel", "--all-mine")
        r2, o, e = ended(p, out, err)
        check("cancel --all-mine stops my live script",
              rc == 0 and co.strip() == f"cancelling script {script_id} (running live): it is interrupted in Blender and rolled back"
              and r2 == 1 and "blendmq: cancelled: the script was stopped " in e, f"exit {rc}, apply exit {r2}: {(co + ce).strip()}")
        after = scene()
        check("after cancel --all-mine: the scene equals the one before", after == before, f"{len(after[0])} objects")
        if after != before:
            before = after

    # 3. watch PLAN_ID
    plan = os.path.join(work, "spheres.json")
    with open(plan, "w") as f:
        json.dump([{"operation": "bpy.ops.mesh.primitive_uv_sphere_add",
                    "params": {"segments": 64, "ring_count": 32, "location": [i * 3, 5, 0]}} for i in range(200)], f)
    p, out, err = start("plan", "run", plan, tag="plan3")
    wait_for(out, "step 3/", p)
    rc, starts, _ = cli("audit", "list", "--all", "--json", "--kind", "plan.start", "--limit", "1")
    pid = json.loads(starts.splitlines()[-1]).get("plan_id") if rc == 0 and starts.strip() else "none"
    w, wout, werr = start("watch", pid, tag="watch3")
    seen = wait_for(wout, f"{pid}  step ", w, limit=30)
    w.send_signal(signal.SIGINT)
    wrc, wo, we = ended(w, wout, werr)
    r2, o, e = ended(p, out, err)
    wl = we.strip().splitlines()
    check("watch PLAN_ID: shows the plan's steps", seen, wo[-200:])
    check("watch PLAN_ID + Ctrl-C: exit 130, the plan cancelled",
          wrc == 130 and f"blendmq: cancelling plan {pid}: it stops after its current step and what it did is rolled back"
          " (Ctrl-C again: leave without waiting)" in we and bool(wl) and wl[-1] == f"blendmq: plan {pid} cancelled",
          f"exit {wrc}: {we.strip()[-400:]}")
    check("watch PLAN_ID + Ctrl-C: the plan's own run ends cancelled", r2 == 1 and "\ncancelled: " in "\n" + o,
          f"exit {r2}: {o.strip().splitlines()[-1] if o.strip() else e}")
    after = scene()
    check("watch PLAN_ID + Ctrl-C: the scene equals the one before", after == before, f"{len(after[0])} objects")

    w, wout, werr = start("watch", "p-nosuch", tag="watch-none")
    wait_for(werr, "watching plan p-nosuch", w, limit=10)
    time.sleep(0.3)
    w.send_signal(signal.SIGINT)
    wrc, wo, we = ended(w, wout, werr, limit=30)
    check("watch NO-SUCH + Ctrl-C: exit 1, nothing in progress",
          wrc == 1 and we.strip().splitlines()[-1:] == ["blendmq: no plan p-nosuch is in progress (it ended, or never started)"],
          f"exit {wrc}: {we.strip()[-300:]}")

    small = os.path.join(work, "small.json")
    with open(small, "w") as f:
        json.dump([{"operation": "bpy.ops.mesh.primitive_uv_sphere_add",
                    "params": {"segments": 64, "ring_count": 32, "location": [i * 3, 12, 0]}} for i in range(30)], f)
    w, wout, werr = start("watch", tag="watch-all")
    wait_for(werr, "watching progress events", w, limit=10)
    p, out, err = start("plan", "run", small, tag="plan-small")
    wait_for(wout, " step 2/", w, limit=60)
    w.send_signal(signal.SIGINT)
    wrc, wo, we = ended(w, wout, werr, limit=30)
    r2, o, e = ended(p, out, err)
    check("plain watch + Ctrl-C: stops watching (exit 0), the plan runs to its end",
          wrc == 0 and r2 == 0 and o.strip().splitlines()[-1:] and o.strip().splitlines()[-1].startswith("done: 30/30 steps"),
          f"watch exit {wrc}, run exit {r2}: {o.strip().splitlines()[-1] if o.strip() else e.strip()[-200:]}")
finally:
    cli("down", timeout=60)
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print(f"{len(failures)} failure(s): {', '.join(failures)}")
    sys.exit(1)
print("Ctrl-C stops a live script and a watched plan; the scene is as it was")
