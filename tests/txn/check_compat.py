"""The add-on on every Blender it supports (issue 30), inside a real headless Blender:

  blender -b --factory-startup --python check_compat.py -- ADDON_DIR PALETTE_YAML

  * every module of the add-on imports (an API one Blender lacks, used at import time, fails here);
  * an object removed with bpy.data.objects.remove leaves None in view_layer.objects.selected
    (3.4, 4.3 and 5.2 alike): a step that selects its target, and a failing plan's rollback,
    still work, and the add-on answers (the None once ended Blender: issue 30);
  * compat.action_fcurves finds a keyframed object's curves (Action.fcurves is gone in 5.x).

deploy/test.sh runs it (as the whole txn group) on Blender 3.4, 4.3 and 5.2.
Exit 0 when every expectation holds, 1 otherwise (each failure printed).
"""
import importlib
import os
import sys
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, PALETTE = argv[0], argv[1]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)

import bpy                                              # noqa: E402
from blendmq import bounds, compat                      # noqa: E402
from blendmq.commands import handle_request             # noqa: E402
from blendmq.scene import cmd_reset_scene, s_select_only  # noqa: E402
from blendmq.transaction import s_Transaction           # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILURES.append(what)


def call(cmd, args):
    return handle_request({"id": 7, "cmd": cmd, "args": args}, time.monotonic())[0]


print("Blender %s, Python %s" % (bpy.app.version_string, sys.version.split()[0]))
# ---- every module imports
for f in sorted(os.listdir(os.path.join(ADDON_DIR, "blendmq"))):
    if f.endswith(".py") and f != "__init__.py":
        try:
            importlib.import_module("blendmq." + f[:-3])
            ok, why = True, ""
        except Exception as e:          # noqa: BLE001 (the point: any error)
            ok, why = False, "%s: %s" % (type(e).__name__, e)
        expect(ok, "blendmq.%s imports %s" % (f[:-3], why))

expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads")


def removed_but_selected():
    """Two cubes selected, one removed with bpy.data.objects.remove: a None in the selection."""
    cmd_reset_scene({})
    bpy.ops.mesh.primitive_cube_add(location=(0, 0, 0))
    a = bpy.context.view_layer.objects.active
    a.name = "keep"
    bpy.ops.mesh.primitive_cube_add(location=(3, 0, 0))
    b = bpy.context.view_layer.objects.active
    a.select_set(True)
    b.select_set(True)
    bpy.data.objects.remove(b)
    return list(bpy.context.view_layer.objects.selected)


sel = removed_but_selected()
print("selection after the removal: %r" % sel)
expect(compat.selected_objects(bpy.context.view_layer) == [o for o in sel if o is not None],
       "compat.selected_objects leaves the None out")

try:
    s_select_only("keep")       # what a step with a target does first
    ok, why = bpy.context.view_layer.objects.active.name == "keep", ""
except Exception as e:          # noqa: BLE001
    ok, why = False, "%s: %s" % (type(e).__name__, e)
expect(ok, "selecting one object right after the removal works %s" % why)

# a step that selects its target (s_select_only) after the removal, through run_plan
removed_but_selected()
r = call("run_plan", {"plan_id": "sel", "cid": "c1", "steps": [
    {"operation": "bpy.ops.object.shade_smooth", "target": "keep", "params": {}}]})
res = r.get("result") or {}
expect(r.get("ok") and res.get("status") == "done", "a step that selects its target runs: %s" % str(r)[:300])

# a failing plan right after the removal: rolled back, answered
removed_but_selected()
r = call("run_plan", {"plan_id": "fail", "cid": "c2", "steps": [
    {"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "name": "ball", "params": {"radius": 0.5}},
    {"operation": "object.location", "target": "no-such-object", "params": {"value": [0, 0, 0]}}]})
res = r.get("result") or {}
expect(r.get("ok") and res.get("status") == "failed" and res.get("rollback") and "error" not in res.get("rollback"),
       "a failing plan rolls back and answers: %s" % str(r)[:400])
expect("ball" not in bpy.data.objects and "keep" in bpy.data.objects, "the plan's sphere is gone, the cube kept")
r = call("ping", {})
expect(bool(r.get("ok")), "the add-on still answers: %s" % str(r)[:200])

# the in-process guard (asset.import's): its rollback removes what was made, then restores the
# selection, with the removed objects' None in it
cmd_reset_scene({})
bpy.ops.mesh.primitive_cube_add()
bpy.context.view_layer.objects.active.name = "keep"
guard = s_Transaction("compat")
bpy.ops.mesh.primitive_cube_add(location=(2, 0, 0))
made = bpy.context.view_layer.objects.active.name
bpy.data.objects["keep"].select_set(True)
try:
    guard.rollback()
    ok, why = made not in bpy.data.objects and "keep" in bpy.data.objects, ""
except Exception as e:          # noqa: BLE001
    ok, why = False, "%s: %s" % (type(e).__name__, e)
expect(ok, "a guard's rollback of a new, selected object works %s" % why)

# ---- Action.fcurves (gone in 5.x)
cmd_reset_scene({})
bpy.ops.mesh.primitive_cube_add()
o = bpy.context.view_layer.objects.active
o.keyframe_insert(data_path="location", frame=1)
o.location.x = 2
o.keyframe_insert(data_path="location", frame=10)
curves = compat.action_fcurves(o.animation_data.action)
expect(len(curves) == 3 and all(len(c.keyframe_points) == 2 for c in curves),
       "compat.action_fcurves: 3 location curves of 2 keys (%d)" % len(curves))

if FAILURES:
    print("%d failure(s)" % len(FAILURES))
    sys.exit(1)
print("all ok")
