"""Run plans in a real headless Blender with the blendmq add-on's own step code.

blender -b --factory-startup --python run_recipes.py -- ADDON.py IN.json OUT.json

IN.json is {"name": [step, ...], ...}. For each plan the scene is emptied, every
step goes through the add-on's cmd_run_step (what the executor sends), and
OUT.json gets {"name": {"ok", "error", "objects": [names], "min_z", "max_size"}}.
"""
import importlib.util
import json
import sys

import bpy
from mathutils import Vector

args = sys.argv[sys.argv.index("--") + 1:]
addon_path, in_path, out_path = args[0], args[1], args[2]
spec = importlib.util.spec_from_file_location("blendmq_addon_under_test", addon_path)
addon = importlib.util.module_from_spec(spec)
spec.loader.exec_module(addon)

with open(in_path, encoding="utf-8") as f:
    plans = json.load(f)

out = {}
for name, steps in plans.items():
    addon.cmd_reset_scene({})
    result = {"ok": True, "error": None}
    for i, step in enumerate(steps):
        try:
            addon.cmd_run_step({"step": step})
        except Exception as e:  # a CommandError, or anything Blender raised
            result["ok"] = False
            result["error"] = "step %d (%s): %s: %s" % (i, step.get("operation"), type(e).__name__, e)
            break
    bpy.context.view_layer.update()
    lo, hi = [1e9] * 3, [-1e9] * 3
    for o in bpy.context.scene.objects:
        for corner in o.bound_box:
            w = o.matrix_world @ Vector(corner)
            for a in range(3):
                lo[a], hi[a] = min(lo[a], w[a]), max(hi[a], w[a])
    result["objects"] = sorted(o.name for o in bpy.context.scene.objects)
    result["min_z"] = lo[2]
    result["max_size"] = max(hi[a] - lo[a] for a in range(3)) if result["objects"] else 0
    result["centre"] = [(lo[a] + hi[a]) / 2 for a in range(3)]
    out[name] = result

with open(out_path, "w", encoding="utf-8") as f:
    json.dump(out, f)
