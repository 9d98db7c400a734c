"""cli.script_interrupt (issue 29): a live script is stopped by a cancel, inside a real headless
Blender, over the real link (the background runtime on the main thread, a client on a thread):

  blender -b --factory-startup --python check_script_interrupt.py -- ADDON_DIR PALETTE_YAML TXN_DIR

  1. run_script of a script that makes 3 cubes, then loops: a cancel_plan naming its plan_id,
     sent while it runs, is answered at once (running: true) while the script still runs (the
     script's watchdog reads the link: nobody else does in the background runtime); the
     script's answer is an error starting "cancelled: the script was stopped", saying it
     removed the 3 cubes and that the scene's fingerprint equals the one before, within 2 s
     of the cancel; a ping sent during the script is answered after it (not lost); the
     scene's objects and fingerprint equal those before.
  2. a script that ignores the interrupt (`while True: try: while True: pass / except
     BaseException: pass`; the validator and the add-on refuse BaseException, so it is
     compiled here past script_exec.prepare): the cancel still ends it (the line tracer's
     harder stop), within 3 s, rolled back exactly.
  3. the same script without a cancel ends at its time limit (1.5 s) plus the harder stop,
     rolled back exactly ("timeout: ...").
  4. a cancel_plan for the script's id that came before the script starts: refused at once,
     "cancelled: ... before it started; nothing ran".

Exit 0 when every expectation holds, 1 otherwise."""
import builtins
import hashlib
import os
import sys
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, PALETTE, TXN_DIR = argv[0], argv[1], argv[2]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)
sys.path.insert(0, TXN_DIR)

import bpy                                              # noqa: E402
from blendmq import bounds, fingerprint, script_exec    # noqa: E402
from blendmq.scene import cmd_reset_scene               # noqa: E402
from link_client import serve as s_serve                # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def names():
    return sorted(bpy.data.objects.keys())


def digest():
    return fingerprint.compute(props=False)["digest"]


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads")
BOUNDS = dict(bounds.s_Palette.bounds)


def run_and_cancel(script, plan_id, cancel_after, timeout_ms=20000, ping=False):
    """serve(): run_script, then (after cancel_after s, unless None) cancel_plan; every frame back."""
    def client(c, out):
        c.send({"id": 20, "cmd": "run_script", "args": {"script": script, "sha256": sha(script), "plan_id": plan_id,
                                                        "timeout_ms": timeout_ms}})
        t0 = time.monotonic()
        if cancel_after is not None:
            time.sleep(cancel_after)
            if ping:
                c.send({"id": 22, "cmd": "ping", "args": {}})
            c.send({"id": 21, "cmd": "cancel_plan", "args": {"plan_id": plan_id}})
            out["cancel_at"] = time.monotonic()
        frames = []
        while True:
            m = c.recv()
            m["_at"] = time.monotonic()
            frames.append(m)
            if any(f.get("id") == 20 for f in frames) and (not ping or any(f.get("id") == 22 for f in frames)):
                break
        out["frames"], out["t0"] = frames, t0
    return s_serve(client, BOUNDS)


cmd_reset_scene({})
bpy.ops.mesh.primitive_uv_sphere_add(location=(5, 5, 0))
bpy.context.active_object.name = "kept"
before, fp_before = names(), digest()

# 1. a script that loops after making 3 cubes
LOOP = ("import bpy\nfor i in range(3):\n    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(i * 2, 0, 0))\n"
        "n = 0\nwhile True:\n    n += 1\n")
out = run_and_cancel(LOOP, "script-loop", 0.6, ping=True)
expect("error" not in out, "1: no client error (%s)" % out.get("error"))
frames = out.get("frames", [])
answer = [f for f in frames if f.get("id") == 20]
cancel = [f for f in frames if f.get("id") == 21]
ping = [f for f in frames if f.get("id") == 22]
err = answer[0].get("error", "") if answer else ""
expect(cancel and cancel[0].get("ok") and cancel[0]["result"] == {"plan_id": "script-loop", "running": True},
       "1: cancel_plan answered at once: running (%s)" % (cancel[:1],))
expect(cancel and answer and frames.index(cancel[0]) < frames.index(answer[0]), "1: the cancel's answer came before the script's")
expect(answer and answer[0].get("ok") is False and err.startswith("cancelled: the script was stopped "),
       "1: the script's answer: cancelled (%s)" % err[:300])
expect("rolled back: removed 3 object(s) the script made (Cube, Cube.001, Cube.002); the scene's fingerprint equals the one before"
       in err, "1: says what the rollback removed, and that it was exact: %s" % err[:300])
took = answer[0]["_at"] - out["cancel_at"] if answer and "cancel_at" in out else 99
expect(took < 2.0, "1: answered %.2f s after the cancel (under 2 s)" % took)
expect(ping and ping[0].get("ok") and frames.index(ping[0]) > frames.index(answer[0]),
       "1: a ping sent while the script ran is answered after it (%s)" % (ping[:1],))
expect(names() == before, "1: the scene's objects equal those before (%s)" % names())
expect(digest() == fp_before, "1: the scene's fingerprint equals the one before")

# 2./3. a script that ignores the interrupt: past script_exec.prepare (which refuses BaseException)
RESIST = ("bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0, 4, 0))\n"
          "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass\n")
real_prepare = script_exec.prepare
script_exec.prepare = lambda source, **kw: (compile(source, "<script>", "exec"), {"__builtins__": builtins, "bpy": bpy})
try:
    out = run_and_cancel(RESIST, "script-resist", 0.6)
    frames = out.get("frames", [])
    answer = [f for f in frames if f.get("id") == 20]
    err = answer[0].get("error", "") if answer else ""
    took = answer[0]["_at"] - out["cancel_at"] if answer and "cancel_at" in out else 99
    expect("error" not in out, "2: no client error (%s)" % out.get("error"))
    expect(err.startswith("cancelled: the script was stopped ") and "rolled back: removed 1 object(s) the script made (Cube)" in err
           and "the scene's fingerprint equals the one before" in err, "2: a script catching BaseException is cancelled: %s" % err[:300])
    expect(took < 3.0, "2: it ended %.2f s after the cancel (under 3 s, not at its 20 s limit)" % took)
    expect(names() == before and digest() == fp_before, "2: rolled back: objects and fingerprint as before")

    out = run_and_cancel(RESIST, "script-resist-2", None, timeout_ms=1500)
    frames = out.get("frames", [])
    answer = [f for f in frames if f.get("id") == 20]
    err = answer[0].get("error", "") if answer else ""
    took = answer[0]["_at"] - out["t0"] if answer else 99
    expect(err.startswith("timeout: the script ran longer than 1500 ms and was stopped; rolled back (restored exactly)"),
           "3: without a cancel it ends at its time limit: %s" % err[:300])
    expect(took < 3.5, "3: %.2f s for a 1.5 s limit" % took)
    expect(names() == before and digest() == fp_before, "3: rolled back: objects and fingerprint as before")
finally:
    script_exec.prepare = real_prepare


# 4. cancelled on its way: nothing runs
def early(c, out):
    c.send({"id": 21, "cmd": "cancel_plan", "args": {"plan_id": "script-early"}})
    out["cancel"] = c.recv()
    c.send({"id": 20, "cmd": "run_script", "args": {"script": LOOP, "sha256": sha(LOOP), "plan_id": "script-early"}})
    out["answer"] = c.recv()


out = s_serve(early, BOUNDS)
expect((out.get("answer") or {}).get("error") == "cancelled: the script was cancelled before it started; nothing ran",
       "4: a cancel before the script starts: %s" % out.get("answer"))
expect(names() == before and digest() == fp_before, "4: nothing ran")

print("script interrupt: %d failure(s)" % len(FAILURES), flush=True)
sys.stdout.flush()
os._exit(1 if FAILURES else 0)
