"""Exact rollback (issue 23) inside a real headless Blender:

  blender -b --factory-startup --python check_rollback.py -- ADDON_DIR PALETTE_YAML [SEED]

Every way a plan or a script can fail leaves the scene with exactly the fingerprint it had
before (fingerprint.compute(), the whole state: objects, data, materials, orphans, settings):

  * the issue's plan: delete snowman_base, a material on snowman_head, a BEVEL on the empty
    "snowman" (fails): the deleted object is back, the material is gone, rollback exact;
  * a parent step, a modifier step, then a failing step;
  * a cancel; a plan superseded by the next plan_begin; the link dropped mid-plan (the
    background runtime's link_lost);
  * a rollback that raises (the snapshot cannot be loaded): answered as an error, the add-on
    goes on answering;
  * scripts (run_script): one that deletes everything then raises, one that deletes in a
    `finally:` after its timeout;
  * a property test: SEEDed random plans of palette operations on the scene's objects, each
    ending with a failing step, leave the fingerprint unchanged.

Exit 0 when every expectation holds, 1 otherwise (each failure printed).
"""
import hashlib
import os
import random
import sys
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, PALETTE = argv[0], argv[1]
SEED = int(argv[2]) if len(argv) > 2 else 23
PLANS = int(os.environ.get("BMQ_ROLLBACK_PLANS", "50"))
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy                                              # noqa: E402
from blendmq import bounds, durable, fingerprint, plan_run, state, transaction   # noqa: E402
from blendmq.commands import handle_request             # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def call(cmd, args):
    return handle_request({"id": 7, "cmd": cmd, "args": args}, time.monotonic())[0]


def digest():
    return fingerprint.compute(props=False)["digest"]


def same_as(before, what):
    """The whole state is as `before` (a full compute()): the digest, and the diff says so."""
    after = fingerprint.compute()
    d = fingerprint.diff(before, after)
    expect(after["digest"] == before["digest"], "%s: fingerprint unchanged%s" % (
        what, "" if after["digest"] == before["digest"] else " (diff %s)" % str(d)[:600]))


def run(plan_id, steps, **extra):
    r = call("run_plan", dict({"plan_id": plan_id, "steps": steps}, **extra))
    return r.get("result") or {"error": r.get("error")}


expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads")
PALETTE_BOUNDS = dict(bounds.s_Palette.bounds)

# ---- a scene worth restoring: the snowman, a material, an orphan mesh, settings, a custom property
r = call("reset_scene", {})
expect(r.get("ok") and len((r.get("result") or {}).get("fingerprint", "")) == 64,
       "reset_scene answers with the new fingerprint: %s" % r)
res = run("build", [
    {"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "params": {"radius": 1.0}, "name": "snowman_base"},
    {"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "params": {"radius": 0.6, "location": [0, 0, 1.4]},
     "name": "snowman_head"},
    {"operation": "bpy.ops.object.empty_add", "params": {}, "name": "snowman"},
    {"operation": "object.material", "target": "snowman_base", "params": {"color": [1, 1, 1]}},
    {"operation": "bpy.ops.mesh.primitive_cube_add", "params": {"size": 0.3}, "name": "hat"},
    {"operation": "object.parent", "target": "hat", "params": {"parent": "snowman_head"}},
])
expect(res.get("status") == "done" and len(res.get("fingerprint") or "") == 64,
       "the snowman is built and committed with its fingerprint: %s" % res)
expect(res.get("fingerprint") == digest(), "the committed fingerprint is the scene's")
# changes made behind the commands' back (this test's own): declared, as a console would have to
bpy.data.meshes.new("orphan_mesh")
bpy.context.scene["story"] = {"chapter": 23, "tags": ["snow"]}
bpy.context.scene.render.resolution_x = 1234
durable.changed()

base = fingerprint.compute()
expect("MESH:orphan_mesh" in base["ids"], "the orphan mesh is part of the fingerprint")

# ---- the plan: delete, material, modifier on an empty (fails at 3)
res = run("issue", [
    {"operation": "bpy.ops.object.delete", "target": "snowman_base", "params": {}},
    {"operation": "object.material", "target": "snowman_head", "params": {"color": [1, 0, 0]}},
    {"operation": "object.modifier", "target": "snowman", "params": {"type": "BEVEL"}},
])
rb = res.get("rollback") or {}
expect(res.get("status") == "failed" and res.get("failed_step") == 3, "the issue's plan fails at step 3: %s" % res)
expect("snowman_base" in bpy.data.objects, "the deleted snowman_base is back")
expect("snowman_base" in rb.get("restored", []), "the rollback names it restored: %s" % rb)
expect(rb.get("exact") is True and rb.get("fingerprint") == base["digest"], "the rollback is exact: %s" % rb)
expect(res.get("fingerprint") == base["digest"], "run_plan's result carries the fingerprint")
same_as(base, "delete + material + modifier")
expect("MESH:orphan_mesh" in fingerprint.compute(props=False)["ids"] and bpy.context.scene.get("story") is not None,
       "orphans and custom properties survive the rollback")

# ---- parent, modifier, scale, then a failing step
res = run("pm", [
    {"operation": "object.parent", "target": "snowman_base", "params": {"parent": "snowman"}},
    {"operation": "object.modifier", "target": "snowman_head", "params": {"type": "SUBSURF", "levels": 2}},
    {"operation": "object.scale", "target": "hat", "params": {"value": [3, 3, 3]}},
    {"operation": "bpy.ops.object.shade_smooth", "target": "snowman_base", "params": {}},
    {"operation": "object.location", "target": "nothing-here", "params": {"value": [1, 1, 1]}},
])
expect(res.get("status") == "failed", "parent + modifier + scale + smooth, then a failure: %s" % res.get("status"))
same_as(base, "parent + modifier + scale + shade_smooth")

# ---- a cancel (noted before the plan: stops at once after no step; mid-plan below over the link)
plan_run.cancel("c1")
res = run("c1", [{"operation": "bpy.ops.object.delete", "target": "hat", "params": {}}])
expect(res.get("status") == "cancelled", "a cancelled plan: %s" % res.get("status"))
same_as(base, "cancel")

# ---- superseded: a plan left open is rolled back by the next plan_begin
expect(call("plan_begin", {"plan_id": "old"}).get("ok"), "plan_begin old")
call("run_step", {"plan_id": "old", "step": {"operation": "bpy.ops.object.delete", "target": "snowman_head",
                                              "params": {}}})
call("run_step", {"plan_id": "old", "step": {"operation": "object.material", "target": "hat",
                                              "params": {"color": [0, 1, 0]}}})
expect("snowman_head" not in bpy.data.objects, "the open plan deleted snowman_head")
r = call("plan_begin", {"plan_id": "new"})
expect(r.get("ok") and (r.get("result") or {}).get("fingerprint") == base["digest"],
       "the next plan_begin supersedes it and starts from the old fingerprint: %s" % r)
same_as(base, "superseded plan")
reports = transaction.hello_fields()["interrupted"]
expect(reports and reports[-1]["plan_id"] == "old" and (reports[-1].get("rollback") or {}).get("exact") is True,
       "the superseded plan's report says its rollback was exact")
r = call("plan_rollback", {"plan_id": "new"})
expect(r.get("ok") and (r.get("result") or {}).get("exact") is True, "plan_rollback answers exact: %s" % r)
same_as(base, "plan_rollback of an empty plan")

# ---- a rollback that raises: answered, and the add-on goes on
real_load = state.load


def broken_load(path):
    raise state.StateError("simulated: the snapshot cannot be read")


state.load = broken_load
try:
    res = run("broken", [{"operation": "bpy.ops.object.delete", "target": "hat", "params": {}},
                         {"operation": "object.location", "target": "nothing-here", "params": {"value": [0, 0, 0]}}])
finally:
    state.load = real_load
expect(res.get("status") == "failed" and "rollback failed" in str((res.get("rollback") or {}).get("error")),
       "a rollback that raises is reported in the answer: %s" % res.get("rollback"))
expect(transaction.TXN.current is None and call("ping", {}).get("ok"), "and the add-on still answers")
durable.restore(durable.DURABLE.snap_path, base["digest"])   # put the scene back for what follows
same_as(base, "restored after the broken rollback")

# ---- scripts: delete everything and raise; delete in finally after a timeout
SCRIPTS = {
    "raise": "import bpy\nfor o in list(bpy.data.objects):\n    bpy.data.objects.remove(o)\n"
             "bpy.data.materials[0].diffuse_color = (1, 0, 0, 1)\nraise ValueError('after deleting everything')\n",
    "timeout": "import bpy\ntry:\n    while True:\n        pass\nfinally:\n"
               "    for o in list(bpy.data.objects):\n        bpy.data.objects.remove(o)\n",
}
for label, script in SCRIPTS.items():
    sha = hashlib.sha256(script.encode()).hexdigest()
    r = call("run_script", {"plan_id": "script-" + label, "script": script, "sha256": sha, "timeout_ms": 500})
    expect(r.get("ok") is False, "script %s fails live: %s" % (label, str(r.get("error"))[:200]))
    expect(transaction.TXN.current is None, "script %s: no transaction left open" % label)
    same_as(base, "script %s" % label)

# ---- property test: random palette plans ending with a failing step
rng = random.Random(SEED)
EXISTING = ["snowman_base", "snowman_head", "snowman", "hat"]
MESHES = ["snowman_base", "snowman_head", "hat"]


def vec(lo, hi):
    return [round(rng.uniform(lo, hi), 3) for _ in range(3)]


def random_step(k, made):
    mesh_targets = MESHES + made
    kind = rng.randrange(12)
    if kind == 0:
        return {"operation": "bpy.ops.mesh.primitive_cube_add", "params": {"size": rng.uniform(0.1, 3),
                                                                           "location": vec(-5, 5)}, "name": "r%d" % k}
    if kind == 1:
        return {"operation": "bpy.ops.mesh.primitive_ico_sphere_add", "params": {"subdivisions": rng.randint(1, 3)},
                "name": "r%d" % k}
    if kind == 2:
        return {"operation": "bpy.ops.object.delete", "target": rng.choice(EXISTING + made), "params": {}}
    if kind == 3:
        return {"operation": "object.material", "target": rng.choice(mesh_targets),
                "params": {"color": [rng.random(), rng.random(), rng.random()], "metallic": rng.random()}}
    if kind == 4:
        return {"operation": "object.modifier", "target": rng.choice(mesh_targets),
                "params": {"type": rng.choice(["BEVEL", "SUBSURF", "ARRAY", "MIRROR", "SOLIDIFY"]),
                           "levels": rng.randint(0, 2), "count": rng.randint(1, 4)}}
    if kind == 5:
        a, b = rng.sample(EXISTING, 2)
        return {"operation": "object.parent", "target": a, "params": {"parent": b}}
    if kind == 6:
        return {"operation": "object.location", "target": rng.choice(EXISTING), "params": {"value": vec(-9, 9)}}
    if kind == 7:
        return {"operation": "object.rotation", "target": rng.choice(EXISTING), "params": {"value": vec(-3, 3)}}
    if kind == 8:
        return {"operation": "object.scale", "target": rng.choice(EXISTING), "params": {"value": vec(0.1, 4)}}
    if kind == 9:
        return {"operation": "bpy.ops.object.shade_smooth", "target": rng.choice(mesh_targets), "params": {}}
    if kind == 10:
        return {"operation": "bpy.ops.object.duplicate", "target": rng.choice(mesh_targets), "params": {},
                "name": "r%d" % k}
    return {"operation": "bpy.ops.object.light_add", "params": {"type": rng.choice(["POINT", "SUN", "SPOT"])},
            "name": "r%d" % k}


changed_plans = 0
for i in range(PLANS):
    steps, made = [], []
    for k in range(rng.randint(1, 6)):
        st = random_step(k, made)
        steps.append(st)
        if "name" in st:
            made.append(st["name"])
    steps.append({"operation": "object.location", "target": "no-such-object-%d" % i, "params": {"value": [0, 0, 0]}})
    res = run("prop-%d" % i, steps)
    rb = res.get("rollback") or {}
    ok = res.get("status") == "failed" and rb.get("exact") is True and digest() == base["digest"]
    changed_plans += 1 if res.get("steps_done", 0) > 0 else 0
    if not ok:
        expect(False, "random plan %d (seed %d) left the scene changed: %s / %s" % (i, SEED, steps, res))
        durable.restore(durable.DURABLE.snap_path, base["digest"])
expect(changed_plans > PLANS // 2, "most random plans changed the scene before failing (%d of %d)" % (changed_plans, PLANS))
same_as(base, "%d random failing plans (seed %d)" % (PLANS, SEED))


# ---- the link dropped mid-plan (background runtime): link_lost restores exactly
from link_client import serve   # noqa: E402


def drop_script(c, out):
    steps = [{"operation": "bpy.ops.object.delete", "target": "snowman_base", "params": {}}] + \
        [{"operation": "bpy.ops.mesh.primitive_cube_add", "params": {"size": 0.5}, "name": "d%d" % i} for i in range(400)]
    c.send({"id": 30, "cmd": "run_plan", "args": {"plan_id": "drop", "steps": steps}})
    while c.recv().get("progress", {}).get("step", 0) < 5:
        pass
    c.sock.close()
    time.sleep(0.5)
    c2 = c.again()
    out["hello2"] = c2.hello
    c2.send({"id": 40, "cmd": "fingerprint", "args": {"full": True}})
    out["fp"] = c2.recv()
    c2.send({"id": 99, "cmd": "shutdown", "args": {}})
    c2.recv()
    return False


out = serve(drop_script, PALETTE_BOUNDS)
expect("error" not in out, "link-loss run: no client error (%s)" % out.get("error"))
reports = ((out.get("hello2") or {}).get("result") or {}).get("interrupted") or []
mine = [rep for rep in reports if rep.get("plan_id") == "drop"]
expect(mine and (mine[0].get("rollback") or {}).get("exact") is True, "the next hello reports an exact rollback: %s"
       % str(mine)[:300])
fp = (out.get("fp") or {}).get("result") or {}
expect(fp.get("digest") == base["digest"] and fp.get("count") == base["count"] and isinstance(fp.get("ids"), dict),
       "the fingerprint command over the link says the scene is as before: %s" % str(fp)[:200])
same_as(base, "link lost mid-plan")

durable.cleanup()
print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
