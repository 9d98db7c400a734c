"""run_plan (issue 14) inside a real headless Blender:

  blender -b --factory-startup --python check_run_plan.py -- ADDON_DIR PALETTE_YAML

  * a whole plan runs in one command: objects made, names mapped ("box" taken, so the step's
    object is "box.001" and later targets follow it), committed;
  * a failing step stops the plan and rolls back in-process what the plan made and changed;
    keep_partial commits what ran instead;
  * chunks: offset 0 opens the plan, later chunks continue it (names carry over), a chunk that
    is not final leaves it open, a chunk for a plan that is not open is refused;
  * a cancel noted before a step stops the plan there and rolls it back;
  * streamed over the real link in the background runtime (server + client socket in this
    process, the server on a thread is not allowed to touch bpy, so the client runs on a thread
    and the server's loop on the main thread): one progress frame per step, in order, before
    the answer; a cancel_plan sent mid-plan stops it and rolls it back; the link dropped
    mid-plan leaves the rollback to link_lost, reported at the next hello;
  * stdout is captured once per batch, and an operator's own output still reaches its error.

Exit 0 when every expectation holds, 1 otherwise (each failure printed).
"""
import os
import sys
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, PALETTE = argv[0], argv[1]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)

import bpy                                              # noqa: E402
from blendmq import bounds, plan_run, transaction         # noqa: E402
from blendmq.commands import handle_request             # noqa: E402
from blendmq.scene import cmd_reset_scene               # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILURES.append(what)


def call(cmd, args):
    return handle_request({"id": 7, "cmd": cmd, "args": args}, time.monotonic())[0]


def cube(name=None, size=1.0, **extra):
    s = {"operation": "bpy.ops.mesh.primitive_cube_add", "params": {"size": size}}
    if name:
        s["name"] = name
    s.update(extra)
    return s


def names():
    return sorted(o.name for o in bpy.data.objects)


expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads")
PALETTE_BOUNDS = dict(bounds.s_Palette.bounds)      # what an executor sends at hello
cmd_reset_scene({})
bpy.ops.mesh.primitive_cube_add()
bpy.context.view_layer.objects.active.name = "box"          # taken: the plan's "box" clashes with it

# ---- a whole plan
plan = [cube("box"), {"operation": "object.location", "target": "box", "params": {"value": [1, 2, 3]}},
        cube("lid", 0.5), {"operation": "object.parent", "target": "lid", "params": {"parent": "box"}}]
r = call("run_plan", {"plan_id": "p1", "steps": plan, "cid": "c1"})
res = r.get("result") or {}
expect(r.get("ok") and res.get("status") == "done" and res.get("steps_done") == 4, "a whole plan runs: %s" % r)
# Blender settles the clash its own way (the step reports the name its object got): the plan's
# box is the one of size 1, the other is of size 2.
mine = [o for o in bpy.data.objects if o.name.startswith("box") and abs(o.dimensions.x - 1.0) < 1e-4]
other = [o for o in bpy.data.objects if o.name.startswith("box") and abs(o.dimensions.x - 2.0) < 1e-4]
expect(len(mine) == 1 and len(other) == 1 and "lid" in names(), "its objects are there: %s" % names())
expect(mine and tuple(mine[0].location) == (1, 2, 3), "a later target follows the object the plan named")
expect(other and other[0].location.length == 0, "the other box is untouched")
expect(mine and bpy.data.objects["lid"].parent == mine[0], "params.parent follows it too")
expect(transaction.TXN.current is None, "committed: no transaction left open")
expect(res.get("addon_ms", -1) >= 0 and res.get("bpy_ms", 0) > 0, "add-on time and bpy time apart: %s" % res)

# ---- a failing step: rolled back in-process
before = names()
other_name = other[0].name      # a rollback loads the snapshot: bpy references from before it go stale
plan = [cube("a1"), {"operation": "object.location", "target": other_name, "params": {"value": [5, 5, 5]}},
        {"operation": "object.location", "target": "nothing-here", "params": {"value": [1, 1, 1]}}, cube("a2")]
r = call("run_plan", {"plan_id": "p2", "steps": plan})
res = r.get("result") or {}
expect(res.get("status") == "failed" and res.get("failed_step") == 3 and res.get("steps_done") == 2,
       "a failing step ends the plan: %s" % res)
expect("step 3" in (res.get("error") or ""), "the error names the step: %s" % res.get("error"))
expect(names() == before, "rolled back: nothing it made stays (%s)" % names())
expect(bpy.data.objects[other_name].location.length == 0, "and what it moved is back")
expect((res.get("rollback") or {}).get("exact") is True, "the rollback is exact (fingerprint as before): %s" % res)
expect(sorted((res.get("rollback") or {}).get("removed", [])) == ["a1"], "the rollback says what it removed: %s" % res)

# ---- keep_partial: what ran stays
r = call("run_plan", {"plan_id": "p3", "steps": plan, "keep_partial": True})
res = r.get("result") or {}
expect(res.get("status") == "failed" and res.get("rollback") is None, "keep_partial: no rollback (%s)" % res)
expect("a1" in names() and "a2" not in names(), "keep_partial keeps the steps that ran")
expect(transaction.TXN.current is None, "keep_partial commits")

# ---- chunks
before = names()
r = call("run_plan", {"plan_id": "p4", "steps": [cube("ch")], "offset": 0, "total": 3, "final": False})
expect((r.get("result") or {}).get("status") == "continue", "a chunk that is not final: continue (%s)" % r)
expect(transaction.TXN.current is not None and transaction.TXN.current.plan_id == "p4", "the plan stays open")
r = call("run_plan", {"plan_id": "p4", "offset": 1, "total": 3, "final": True,
                      "steps": [{"operation": "object.location", "target": "ch", "params": {"value": [0, 0, 4]}},
                                cube("ch2")]})
res = r.get("result") or {}
expect(res.get("status") == "done" and res.get("steps_done") == 3, "the last chunk ends it: %s" % res)
ch = [n for n in names() if n not in before and n.startswith("ch") and n != "ch2"]
expect(len(ch) == 1 and tuple(bpy.data.objects[ch[0]].location) == (0, 0, 4), "names carry across chunks")
r = call("run_plan", {"plan_id": "p5", "offset": 2, "steps": [cube()]})
expect(r.get("ok") is False and "not open" in (r.get("error") or ""), "a later chunk of a plan not open is refused: %s" % r)
r = call("run_plan", {"plan_id": "p6", "steps": "no"})
expect(r.get("ok") is False and "steps" in (r.get("error") or ""), "steps must be a list: %s" % r)

# ---- a cancel noted before a step
before = names()
plan_run.cancel("p7")
r = call("run_plan", {"plan_id": "p7", "steps": [cube("x1"), cube("x2")]})
expect((r.get("result") or {}).get("status") == "cancelled", "a cancelled plan stops: %s" % r)
expect(names() == before, "and is rolled back")
expect("p7" not in plan_run.CANCELS, "the cancel is forgotten once used")

# ---- an operator's own output reaches its error inside a batch
run = plan_run.PlanRun({"plan_id": "p8", "steps": [cube("o1"),
                        {"operation": "bpy.ops.object.join"}]})
run.advance()
expect(run.result["status"] in ("done", "failed"), "a batch with an operator that prints: %s" % run.result)
print("blendmq test: stdout is back", flush=True)
expect(os.fstat(1).st_ino != os.fstat(plan_run.CAPTURE.file.fileno()).st_ino, "fd 1 is restored after the batch")
call("plan_rollback", {"plan_id": "p8"})


# ---- streamed over the real link (background runtime)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from link_client import serve as s_serve      # noqa: E402


def serve(script):
    return s_serve(script, PALETTE_BOUNDS)


def stream_script(c, out):
    steps = [cube("s%d" % i, 0.5) for i in range(30)]
    c.send({"id": 10, "cmd": "run_plan", "args": {"plan_id": "s1", "steps": steps}})
    frames = []
    while True:
        m = c.recv()
        frames.append(m)
        if "ok" in m:
            break
    out["frames"] = frames


def cancel_script(c, out):
    steps = [cube("k%d" % i, 0.5) for i in range(400)]
    c.send({"id": 20, "cmd": "run_plan", "args": {"plan_id": "k1", "steps": steps}})
    frames, sent = [], False
    while True:
        m = c.recv()
        frames.append(m)
        if not sent and m.get("progress", {}).get("step") == 5:
            c.send({"id": 21, "cmd": "cancel_plan", "args": {"plan_id": "k1"}})
            sent = True
        if m.get("id") == 20 and "ok" in m:
            break
    out["frames"] = frames


def drop_script(c, out):
    steps = [cube("d%d" % i, 0.5) for i in range(400)]
    c.send({"id": 30, "cmd": "run_plan", "args": {"plan_id": "d1", "cid": "story-d1", "steps": steps}})
    while c.recv().get("progress", {}).get("step", 0) < 5:
        pass
    c.sock.close()          # the link drops mid-plan
    time.sleep(0.5)
    c2 = c.again()
    out["hello2"] = c2.hello
    c2.send({"id": 99, "cmd": "shutdown", "args": {}})
    c2.recv()
    return False            # the server is stopping already


before = names()
out = serve(stream_script)
expect("error" not in out, "streamed run: no client error (%s)" % out.get("error"))
frames = out.get("frames", [])
progress = [f["progress"] for f in frames if "progress" in f]
expect([p["step"] for p in progress] == list(range(1, 31)), "one progress frame per step, in order")
expect(all("ok" not in f for f in frames[:-1]) and frames[-1].get("id") == 10, "progress before the answer, same id")
expect(all(f["id"] == 10 for f in frames), "every frame carries the request's id")
expect(frames and (frames[-1].get("result") or {}).get("status") == "done", "streamed plan done: %s" % frames[-1:])
expect(len(names()) == len(before) + 30, "its 30 objects are there")

before = names()
out = serve(cancel_script)
expect("error" not in out, "cancel run: no client error (%s)" % out.get("error"))
frames = out.get("frames", [])
final = frames[-1] if frames else {}
cancel_answer = [f for f in frames if f.get("id") == 21]
steps_run = len([f for f in frames if "progress" in f])
expect((final.get("result") or {}).get("status") == "cancelled", "cancel_plan mid-plan stops it: %s"
       % (final.get("result") or final))
expect(5 <= steps_run < 400, "it stopped early (%d of 400 steps ran)" % steps_run)
expect(cancel_answer and cancel_answer[0]["result"]["running"] is True, "cancel_plan is answered: running")
expect(names() == before, "and the plan is rolled back")

before = names()
out = serve(drop_script)
report = (out.get("hello2", {}).get("result") or {}).get("interrupted") or []
expect(any(r.get("plan_id") == "d1" for r in report), "a dropped link: the next hello reports plan d1 (%s)"
       % out.get("hello2"))
expect(names() == before, "and what it made is gone")

print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
