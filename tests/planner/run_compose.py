"""Run composed plans in a real headless Blender with the blendmq add-on's own step code, and
say where everything ended up.

blender -b --factory-startup --python run_compose.py -- ADDON.py IN.json OUT.json

IN.json is {"key": {"plan": [step, ...], "render": "PATH.png" or null}, ...}. For each plan
the scene is emptied and every step goes through the add-on's cmd_run_step (what the
executor sends). OUT.json gets {"key": {"ok", "error", "roots": {ROOT: {"box": [min, max],
"meshes": [[min, max], ...], "children": N}}, "orphans": [names of meshes under no root],
"camera": bool, "sun": bool, "framed": bool (every corner of the scene's box is inside the
plan camera's picture)}}. With "render", the plan's own camera (else one that frames the
meshes) renders the scene (Workbench, 960 × 540) to that path.
"""
import importlib.util
import json
import os
import sys

import bpy
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Vector

args = sys.argv[sys.argv.index("--") + 1:]
addon_path, in_path, out_path = args[0], args[1], args[2]
spec = importlib.util.spec_from_file_location("blendmq_addon_under_test", addon_path)
addon = importlib.util.module_from_spec(spec)
spec.loader.exec_module(addon)

with open(in_path, encoding="utf-8") as f:
    jobs = json.load(f)


def world_box(objs):
    """The box around the objects' vertices where they really are (modifiers applied)."""
    lo, hi = [1e9] * 3, [-1e9] * 3
    depsgraph = bpy.context.evaluated_depsgraph_get()
    for o in objs:
        ev = o.evaluated_get(depsgraph)
        mesh = ev.to_mesh()
        for v in mesh.vertices:
            w = o.matrix_world @ v.co
            for a in range(3):
                lo[a], hi[a] = min(lo[a], w[a]), max(hi[a], w[a])
        ev.to_mesh_clear()
    return [lo, hi]


def root_of(o):
    while o.parent is not None:
        o = o.parent
    return o


def framing_camera(meshes):
    """A camera from Blender's default camera direction that sees every mesh (single recipes have none)."""
    lo, hi = world_box(meshes)
    centre = (Vector(lo) + Vector(hi)) / 2
    radius = max((Vector(hi) - Vector(lo)).length / 2, 0.01)
    cam = bpy.data.objects.new("preview_camera", bpy.data.cameras.new("preview_camera"))
    bpy.context.scene.collection.objects.link(cam)
    direction = Vector((7.36, -6.93, 4.96)).normalized()
    cam.location = centre + direction * radius / 0.2 * 1.05
    cam.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    cam.data.clip_start, cam.data.clip_end = radius * 0.05, radius * 20 + 10
    return cam


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
            result["error"] = "step %d (%s): %s: %s" % (i, step.get("operation"), type(e).__name__, e)
            break
    bpy.context.view_layer.update()
    meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    roots = {}
    for o in bpy.context.scene.objects:
        if o.type == "EMPTY" and o.parent is None:
            mine = [m for m in meshes if root_of(m) == o]
            roots[o.name] = {"box": world_box(mine) if mine else None, "meshes": [world_box([m]) for m in mine],
                             "children": len(o.children), "location": list(o.location),
                             "rotation_z": o.rotation_euler[2]}
    result["roots"] = roots
    result["orphans"] = sorted(m.name for m in meshes if m.parent is None)
    cams = [o for o in bpy.context.scene.objects if o.type == "CAMERA"]
    result["camera"] = bool(cams)
    result["sun"] = any(o.type == "LIGHT" and o.data.type == "SUN" for o in bpy.context.scene.objects)
    if cams and meshes:
        lo, hi = world_box(meshes)
        inside = True
        for k in range(8):
            p = Vector([hi[a] if (k >> a) & 1 else lo[a] for a in range(3)])
            v = world_to_camera_view(bpy.context.scene, cams[0], p)
            inside = inside and -0.001 <= v.x <= 1.001 and -0.001 <= v.y <= 1.001 and v.z > 0
        result["framed"] = inside
    if job.get("render") and result["ok"] and meshes:
        render(os.path.abspath(job["render"]), cams[0] if cams else framing_camera(meshes))
        result["rendered"] = os.path.exists(job["render"])
    out[key] = result

with open(out_path, "w", encoding="utf-8") as f:
    json.dump(out, f)
