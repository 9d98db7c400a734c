"""Run composed room plans in a real headless Blender with the blendmq add-on's own step code and
say what was built, for room_bench.py to score.

blender -b --factory-startup --python room_check_blender.py -- ADDON.py IN.json OUT.json

IN.json is {"key": {"plan": [step, ...], "render": "PATH.png" or null}, ...}. For each plan the
scene is emptied and every step goes through the add-on's cmd_run_step. OUT.json gets {"key":
{"ok", "error", "roots": {ROOT: {"rotation_z", "meshes": [{"name", "box": [min, max], "colour":
[r, g, b] or null}]}}, "orphans": [...]}}: boxes from the evaluated vertices in world space, the
colour from the first material's Principled BSDF base colour. With "render", the plan's camera
renders the scene (Workbench, 960 × 540) to that path.
"""
import importlib.util
import json
import os
import sys

import bpy

args = sys.argv[sys.argv.index("--") + 1:]
addon_path, in_path, out_path = args[0], args[1], args[2]
spec = importlib.util.spec_from_file_location("blendmq_addon_under_test", addon_path)
addon = importlib.util.module_from_spec(spec)
spec.loader.exec_module(addon)

with open(in_path, encoding="utf-8") as f:
    jobs = json.load(f)


def box_of(o, depsgraph):
    ev = o.evaluated_get(depsgraph)
    mesh = ev.to_mesh()
    lo, hi = [1e9] * 3, [-1e9] * 3
    for v in mesh.vertices:
        w = o.matrix_world @ v.co
        for a in range(3):
            lo[a], hi[a] = min(lo[a], w[a]), max(hi[a], w[a])
    ev.to_mesh_clear()
    return [lo, hi]


def colour_of(o):
    for slot in o.material_slots:
        m = slot.material
        if m and m.use_nodes:
            for n in m.node_tree.nodes:
                if n.type == "BSDF_PRINCIPLED":
                    return list(n.inputs["Base Color"].default_value)[:3]
        if m:
            return list(m.diffuse_color)[:3]
    return None


def root_of(o):
    while o.parent is not None:
        o = o.parent
    return o


def render(path, camera):
    scene = bpy.context.scene
    scene.camera = camera
    r = scene.render
    r.engine = "BLENDER_WORKBENCH"
    r.resolution_x, r.resolution_y, r.resolution_percentage = 960, 540, 100
    r.image_settings.file_format = "PNG"
    r.filepath = path
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "MATERIAL"
    scene.display.shading.show_shadows = True
    scene.view_settings.view_transform = "Standard"
    bpy.ops.render.render(write_still=True)


out = {}
for key, job in jobs.items():
    addon.cmd_reset_scene({})
    result = {"ok": True, "error": None}
    for i, step in enumerate(job["plan"]):
        try:
            addon.cmd_run_step({"step": step})
        except Exception as e:  # a CommandError, or anything Blender raised
            result["ok"] = False
            result["error"] = "step %d (%s): %s: %s" % (i + 1, step.get("operation"), type(e).__name__, e)
            break
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    roots = {}
    for o in bpy.context.scene.objects:
        if o.type == "EMPTY" and o.parent is None:
            roots[o.name] = {"rotation_z": o.rotation_euler[2], "location": list(o.location), "meshes": []}
    orphans = []
    for o in bpy.context.scene.objects:
        if o.type != "MESH":
            continue
        r = root_of(o)
        if r.name not in roots:
            orphans.append(o.name)
            continue
        roots[r.name]["meshes"].append({"name": o.name, "box": box_of(o, depsgraph), "colour": colour_of(o)})
    result["roots"] = roots
    result["orphans"] = orphans
    cams = [o for o in bpy.context.scene.objects if o.type == "CAMERA"]
    if job.get("render") and result["ok"] and cams:
        render(os.path.abspath(job["render"]), cams[0])
        result["rendered"] = os.path.exists(job["render"])
    out[key] = result

with open(out_path, "w", encoding="utf-8") as f:
    json.dump(out, f)
