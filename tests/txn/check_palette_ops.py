"""The palette's Blender operations of issue 27 inside a real headless Blender:

  blender -b --factory-startup --python check_palette_ops.py -- ADDON_DIR PALETTE_YAML

  * the seeds' own plans run as written: User Story 2's (object.location.z.add) and the data
    model's object.active.scale;
  * every new kind of step (property paths and their forms, scene paths, mode_set and the edit
    steps, boolean/screw/shrinkwrap/array-on-curve modifiers, curves, text, Principled fields,
    keyframes) runs and does what it says;
  * each is refused by the add-on outside its bounds (defence behind the validator), and
    hostile paths (filepath, drivers, handlers, bl_rna, '__', id_data) are refused;
  * each one's plan, followed by a failing step, is rolled back exactly: the fingerprint and the
    objects as before, the object back in object mode.

Exit 0 when every expectation holds, 1 otherwise (each failure printed)."""
import math
import sys
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, PALETTE = argv[0], argv[1]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)

import bpy                                              # noqa: E402
from blendmq import bounds, fingerprint, transaction     # noqa: E402
from blendmq.commands import handle_request             # noqa: E402
from blendmq.scene import cmd_reset_scene               # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILURES.append(what)


def call(cmd, args):
    return handle_request({"id": 7, "cmd": cmd, "args": args}, time.monotonic())[0]


N = [0]


def run(steps):
    N[0] += 1
    r = call("run_plan", {"plan_id": "t%d" % N[0], "steps": steps})
    return r.get("result") or {"error": r.get("error")}


def obj(name):
    return bpy.data.objects.get(name)


def close(a, b, eps=1e-4):
    return all(abs(x - y) < eps for x, y in zip(a, b))


def step(op, params=None, target=None, name=None):
    s = {"operation": op}
    if params is not None:
        s["params"] = params
    if target is not None:
        s["target"] = target
    if name is not None:
        s["name"] = name
    return s


expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads")
cmd_reset_scene({})

# ---- the seeds' plans, as written
us2 = [{"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "params": {"radius": 1}},
       {"operation": "object.location.z.add", "params": {"value": 1}},
       {"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "params": {"radius": 0.5}}]
res = run(us2)
spheres = sorted((o for o in bpy.data.objects if o.type == "MESH"), key=lambda o: -o.dimensions.x)
expect(res.get("status") == "done", "User Story 2's plan runs as written: %s" % res)
expect(len(spheres) == 2 and close(spheres[0].location, (0, 0, 1)) and close(spheres[1].location, (0, 0, 0)),
       "the first sphere went up by 1, the second stayed at the origin")
res = run([step("object.active.scale", {"value": [2, 2, 2]})])
expect(res.get("status") == "done" and close(bpy.context.view_layer.objects.active.scale, (2, 2, 2)),
       "object.active.scale (the data model's path) sets the active object's scale: %s" % res)

# ---- property path forms
cmd_reset_scene({})
res = run([step("bpy.ops.mesh.primitive_cube_add", {}, name="c"),
           step("object.location", {"value": [1, 2, 3]}, "c"),
           step("object.location.x.set", {"value": 5}, "c"),
           step("object.location.y.add", {"value": 1}, "c"),
           step("object.scale.mul", {"value": [2, 3, 4]}, "c"),
           step("object.scale.z.mul", {"value": 0.5}, "c"),
           step("object.rotation_euler.z", {"value": 1.5}, "c"),
           step("object.hide_render", {"value": True}, "c"),
           step("object.dimensions", {"value": [4, 4, 4]}, "c"),
           step("bpy.ops.object.modifier_add", {"type": "BEVEL"}, "c"),
           step('object.modifiers["Bevel"].width', {"value": 0.3}, "c"),
           step("bpy.ops.object.light_add", {"type": "SPOT"}, name="spot"),
           step("object.data.energy", {"value": 500}, "spot"),
           step("object.data.energy.mul", {"value": 2}, "spot"),
           step("object.data.color", {"value": [1, 0.5, 0.2]}, "spot"),
           step("object.data.spot_size", {"value": 1.0}, "spot"),
           step("bpy.ops.object.camera_add", {}, name="cam"),
           step("object.data.lens", {"value": 85}, "cam"),
           step("scene.frame_end", {"value": 120}),
           step("scene.frame_start.add", {"value": 4}),
           step("scene.render.resolution_x", {"value": 800}),
           step("scene.world.color", {"value": [0.1, 0.2, 0.3]})])
c = obj("c")
expect(res.get("status") == "done", "property path forms run: %s" % res)
if c is not None and res.get("status") == "done":
    expect(close(c.location, (5, 3, 3)), "location set, x set, y add: %s" % (tuple(c.location),))
    expect(close(c.dimensions, (4, 4, 4), 1e-3) and abs(c.rotation_euler.z - 1.5) < 1e-5 and c.hide_render,
           "dimensions, rotation z and hide_render set")
    expect(abs(c.modifiers["Bevel"].width - 0.3) < 1e-5, 'modifiers["Bevel"].width set')
    expect(abs(obj("spot").data.energy - 1000) < 1e-3 and abs(obj("spot").data.spot_size - 1.0) < 1e-5
           and close(obj("spot").data.color, (1, 0.5, 0.2)), "light energy set then doubled, colour, cone")
    expect(abs(obj("cam").data.lens - 85) < 1e-4, "camera lens set")
    sc = bpy.context.scene
    expect(sc.frame_end == 120 and sc.frame_start == 5 and sc.render.resolution_x == 800
           and close(sc.world.color, (0.1, 0.2, 0.3)), "scene paths: frame range, resolution, world colour")


def refused(steps, what, needle=None):
    before = fingerprint.compute(props=False)["digest"]
    res = run(steps)
    err = res.get("error") or ""
    expect(res.get("status") == "failed" and (needle is None or needle in err)
           and fingerprint.compute(props=False)["digest"] == before,
           "%s is refused and nothing changes: %s" % (what, err[:160]))


base = [step("bpy.ops.mesh.primitive_cube_add", {}, name="r")]
refused(base + [step("object.location", {"value": [1e6, 0, 0]}, "r")], "a location outside its bounds", "must be")
refused(base + [step("object.location.x.add", {"value": 25000}, "r")], "an add over the bounds' span", "value must be")
refused(base + [step("object.location.x.add", {"value": 9999}, "r"), step("object.location.x.add", {"value": 9999}, "r")],
        "an add whose result leaves the bounds", "would make")
refused(base + [step("object.scale.mul", {"value": [0, 1, 1]}, "r")], "a mul that makes scale 0", "would make")
refused(base + [step("object.data.energy", {"value": 10}, "r")], "a light path on a mesh", "has no property")
refused(base + [step("object.hide_render.add", {"value": 1}, "r")], "add on a bool", "only set")
refused(base + [step("object.location.w", {"value": 1}, "r")], "component w of a vec3", "no component")
refused(base + [step("object.rotation_mode", {"value": "XYZ"}, "r")], "a path the palette does not list", "not in the palette")
for hostile in ("object.data.filepath", "scene.render.filepath", "object.animation_data.drivers",
                "object.driver_add", "scene.handlers", "object.bl_rna.name", "object.__class__",
                "object.id_data.name", "object.data.__doc__", "object.library.filepath",
                "object.modifiers[\"x\"].__init__", "scene.world.node_tree.name", "object._x"):
    refused(base + [step(hostile, {"value": 1}, "r")], "hostile path %s" % hostile, "refused")
refused(base + [step('object.modifiers["a\\"b"].width', {"value": 0.1}, "r")], "a subscript with a quote", "subscript")

# ---- each new kind of step: runs, then rolled back exactly by a later failure
cmd_reset_scene({})
call("run_plan", {"plan_id": "seed", "steps": [step("bpy.ops.mesh.primitive_cube_add", {"size": 1}, name="keep")]})
FAIL = step("object.location", {"value": [1, 1, 1]}, "no-such-object")


def s_state():
    """What the groups change, read directly (not through the fingerprint)."""
    sc, k = bpy.context.scene, obj("keep")
    world = tuple(round(c, 5) for c in sc.world.color) if sc.world else None
    return (sc.frame_start, sc.frame_end, world, len(bpy.data.worlds), len(bpy.data.materials), len(bpy.data.actions),
            len(bpy.data.meshes), len(bpy.data.curves),
            tuple(round(c, 5) for c in k.location), tuple(round(c, 5) for c in k.scale),
            tuple(round(c, 5) for c in k.rotation_euler), len(k.data.vertices), [m.type for m in k.modifiers],
            k.animation_data is not None and k.animation_data.action is not None, len(k.material_slots), k.mode)
GROUPS = {
    "paths": [step("object.location.z.add", {"value": 2}, "keep"), step("object.scale", {"value": [2, 1, 1]}, "keep"),
              step("scene.frame_end", {"value": 77}), step("scene.world.color.r", {"value": 0.9})],
    "edit: extrude, inset, bevel, subdivide, merge": [
        step("bpy.ops.mesh.primitive_cube_add", {}, name="e"), step("bpy.ops.object.mode_set", {"mode": "EDIT"}, "e"),
        step("bpy.ops.mesh.select_all", {"action": "SELECT"}, "e"),
        step("mesh.extrude", {"offset": [0, 0, 1]}, "e"), step("mesh.extrude", {"distance": 0.2}, "e"),
        step("bpy.ops.mesh.inset", {"thickness": 0.05}, "e"),
        step("bpy.ops.mesh.bevel", {"offset": 0.02, "segments": 2}, "e"),
        step("bpy.ops.mesh.select_all", {"action": "SELECT"}, "e"),
        step("bpy.ops.mesh.subdivide", {"number_cuts": 1}, "e"), step("bpy.ops.mesh.solidify", {"thickness": 0.01}, "e"),
        step("bpy.ops.mesh.select_all", {"action": "DESELECT"}, "e"), step("mesh.loop_cut", {"cuts": 2, "edge": 0}, "keep"),
        step("object.location.x", {"value": 3}, "e")],
    "edit: spin, bridge, merge": [
        step("bpy.ops.mesh.primitive_circle_add", {"vertices": 8, "radius": 0.5, "location": [1, 0, 0]}, name="prof"),
        step("bpy.ops.mesh.spin", {"steps": 12, "angle": 6.2832, "axis": [0, 0, 1], "center": [0, 0, 0]}, "prof"),
        step("bpy.ops.mesh.primitive_cylinder_add", {"end_fill_type": "NOTHING"}, name="tube"),
        step("bpy.ops.mesh.select_all", {"action": "SELECT"}, "tube"),
        step("bpy.ops.mesh.bridge_edge_loops", {"number_cuts": 2}, "tube"),
        step("bpy.ops.mesh.primitive_plane_add", {}, name="pl"),
        step("bpy.ops.mesh.merge", {"type": "CENTER"}, "pl")],
    "modifiers: boolean, screw, shrinkwrap, array on a curve": [
        step("bpy.ops.mesh.primitive_cylinder_add", {"radius": 0.3, "depth": 3}, name="hole"),
        step("object.modifier", {"type": "BOOLEAN", "object": "hole", "operation": "DIFFERENCE"}, "keep"),
        step("bpy.ops.mesh.primitive_plane_add", {"size": 0.2}, name="prof2"),
        step("object.modifier", {"type": "SCREW", "steps": 24, "axis": "Z"}, "prof2"),
        step("bpy.ops.mesh.primitive_ico_sphere_add", {"subdivisions": 2}, name="wrap"),
        step("object.modifier", {"type": "SHRINKWRAP", "object": "keep"}, "wrap"),
        step("bpy.ops.curve.primitive_bezier_circle_add", {"radius": 2}, name="rail"),
        step("bpy.ops.mesh.primitive_cube_add", {"size": 0.1}, name="link"),
        step("object.modifier", {"type": "ARRAY", "count": 5, "object": "rail"}, "link")],
    "curves and text": [
        step("bpy.ops.curve.primitive_bezier_curve_add", {}, name="cv"), step("object.data.bevel_depth", {"value": 0.05}, "cv"),
        step("object.data.extrude", {"value": 0.1}, "cv"), step("object.data.resolution_u", {"value": 24}, "cv"),
        step("bpy.ops.curve.primitive_nurbs_path_add", {}, name="path"),
        step("bpy.ops.object.text_add", {"location": [0, 0, 2]}, name="sign"),
        step("object.data.body", {"value": "OPEN 24/7"}, "sign"), step("object.data.size", {"value": 0.5}, "sign"),
        step("object.data.extrude", {"value": 0.05}, "sign"), step("object.data.align_x", {"value": "CENTER"}, "sign")],
    "materials": [
        step("object.material", {"color": [0.8, 0.8, 0.9], "transmission": 1.0, "roughness": 0.05}, "keep"),
        step("bpy.ops.mesh.primitive_uv_sphere_add", {}, name="bulb"),
        step("object.material", {"color": [1, 1, 0.8], "emission_color": [1, 0.9, 0.6], "emission_strength": 20}, "bulb")],
    "keyframes": [
        step("scene.frame_end", {"value": 100}),
        step("object.keyframe_insert", {"data_path": "rotation_euler", "frame": 1, "index": 2, "interpolation": "LINEAR"}, "keep"),
        step("object.rotation_euler.z", {"value": 6.2832}, "keep"),
        step("object.keyframe_insert", {"data_path": "rotation_euler", "frame": 100, "index": 2,
                                        "interpolation": "LINEAR", "extrapolation": "LINEAR"}, "keep"),
        step("bpy.ops.object.light_add", {"type": "POINT"}, name="flicker"),
        step("object.data.energy", {"value": 10}, "flicker"),
        step("object.keyframe_insert", {"data_path": "data.energy", "frame": 1, "interpolation": "LINEAR"}, "flicker"),
        step("object.data.energy", {"value": 100}, "flicker"),
        step("object.keyframe_insert", {"data_path": "data.energy", "frame": 10, "interpolation": "CONSTANT"}, "flicker")],
}
for group, steps in GROUPS.items():
    before_fp = fingerprint.compute(props=False)["digest"]
    before_names = sorted(bpy.data.objects.keys())
    res = run(steps)
    ok = res.get("status") == "done"
    expect(ok, "%s: the plan runs (%s)" % (group, res.get("error") or "done"))
    expect(all(o.mode == "OBJECT" for o in bpy.data.objects), "%s: every object in object mode at the end" % group)
    if group.startswith("edit: extrude"):
        e = obj("e")
        expect(e is not None and len(e.data.vertices) > 40, "the edits made geometry (%d vertices)"
               % (len(e.data.vertices) if e else -1))
        expect(obj("keep") is not None and len(obj("keep").data.vertices) > 8, "the loop cut cut the target's ring")
    if group.startswith("edit: spin") and ok:
        expect(len(obj("prof").data.vertices) >= 8 * 12, "spin made a solid of revolution (%d vertices)"
               % len(obj("prof").data.vertices))
        expect(len(obj("pl").data.vertices) == 1, "merge at centre left one vertex")
    if group.startswith("modifiers") and ok:
        k = obj("keep")
        expect(k.modifiers[-1].type == "BOOLEAN" and k.modifiers[-1].object == obj("hole") and obj("hole").hide_render,
               "the boolean cuts with the named object, hidden from renders")
        mods = obj("link").modifiers
        expect(len(mods) == 2 and mods[0].fit_type == "FIT_CURVE" and mods[0].curve == obj("rail")
               and mods[1].type == "CURVE" and mods[1].object == obj("rail"), "the array fits along the curve, bent along it")
    if group == "curves and text" and ok:
        expect(obj("sign").data.body == "OPEN 24/7" and abs(obj("cv").data.bevel_depth - 0.05) < 1e-6, "text body, bevel depth")
    if group == "materials" and ok:
        from blendmq import compat
        bsdf = obj("bulb").active_material.node_tree.nodes.get("Principled BSDF")
        expect(bsdf is not None and abs(compat.principled_input(bsdf, "emission_strength").default_value - 20) < 1e-5,
               "emission strength on the Principled BSDF")
    if group == "keyframes" and ok:
        from blendmq import compat
        fcs = [f for f in compat.action_fcurves(obj("keep").animation_data.action) if f.data_path == "rotation_euler"]
        expect(len(fcs) == 1 and len(fcs[0].keyframe_points) == 2 and fcs[0].extrapolation == "LINEAR"
               and fcs[0].keyframe_points[0].interpolation == "LINEAR", "two linear keys on rotation z, linear extrapolation")
        bpy.context.scene.frame_set(50)
        expect(abs(obj("keep").rotation_euler.z - math.pi) < 0.05, "half way through it has turned half a turn")
        bpy.context.scene.frame_set(5)
        expect(abs(obj("flicker").data.energy - 50) < 0.5, "a light's energy is keyed on its data (%g at frame 5)"
               % obj("flicker").data.energy)
        bpy.context.scene.frame_set(1)
    call("reset_scene", {})
    call("run_plan", {"plan_id": "seed%d" % N[0], "steps": [step("bpy.ops.mesh.primitive_cube_add", {"size": 1}, name="keep")]})
    before_fp = fingerprint.compute(props=False)["digest"]
    before_names = sorted(bpy.data.objects.keys())
    before_state = s_state()
    res = run(steps + [FAIL])
    rb = res.get("rollback") or {}
    expect(res.get("status") == "failed" and rb.get("exact") is True, "%s: a later failure rolls it back exactly (%s)"
           % (group, rb))
    expect(fingerprint.compute(props=False)["digest"] == before_fp and sorted(bpy.data.objects.keys()) == before_names,
           "%s: the scene is as before" % group)
    expect(all(o.mode == "OBJECT" for o in bpy.data.objects), "%s: object mode after the rollback" % group)
    expect(s_state() == before_state, "%s: every value it changed is back (%s)" % (group, s_state()))

# ---- a seeded property test, as txn.rollback's: random plans of the new kinds of step, each
# ending with a failing step, must leave the scene exactly as it was (fingerprint and values)
import os          # noqa: E402
import random      # noqa: E402
SEED = int(os.environ.get("BMQ_SEED", "0") or 0) or int(time.time())
print("palette_ops property test seed: %d (replay with BMQ_SEED=%d)" % (SEED, SEED))
rng = random.Random(SEED)


def random_step(k, meshes, curves, texts):
    kind = rng.randrange(14)
    t = rng.choice(meshes)
    if kind == 0:
        return step("bpy.ops.mesh.primitive_cube_add", {"size": round(rng.uniform(0.2, 2), 3)}, name="m%d" % k)
    if kind == 1:
        return step(rng.choice(["object.location.x.add", "object.location.z", "object.active.location.y.set"]),
                    {"value": round(rng.uniform(-5, 5), 3)}, t)
    if kind == 2:
        return step(rng.choice(["object.scale.mul", "object.scale"]), {"value": [round(rng.uniform(0.5, 2), 3)] * 3}, t)
    if kind == 3:
        return step(rng.choice(["scene.frame_end", "scene.frame_start", "scene.render.resolution_x"]),
                    {"value": rng.randint(16, 400)})
    if kind == 4:
        return step("scene.world.color", {"value": [round(rng.random(), 3) for _ in range(3)]})
    if kind == 5:
        return step("bpy.ops.mesh.select_all", {"action": rng.choice(["SELECT", "INVERT"])}, t)
    if kind == 6:
        return rng.choice([step("mesh.extrude", {"offset": [0, 0, round(rng.uniform(-1, 1), 3)]}, t),
                           step("bpy.ops.mesh.inset", {"thickness": 0.05}, t),
                           step("bpy.ops.mesh.subdivide", {"number_cuts": rng.randint(1, 2)}, t),
                           step("bpy.ops.mesh.bevel", {"offset": 0.02, "segments": rng.randint(1, 3)}, t),
                           step("mesh.loop_cut", {"cuts": rng.randint(1, 3), "edge": rng.randint(0, 5)}, t),
                           step("bpy.ops.object.mode_set", {"mode": rng.choice(["EDIT", "OBJECT"])}, t)])
    if kind == 7 and len(meshes) > 1:
        a, b = rng.sample(meshes, 2)
        return step("object.modifier", {"type": "BOOLEAN", "object": b, "operation": rng.choice(["DIFFERENCE", "UNION"])}, a)
    if kind == 8:
        return step("object.modifier", {"type": rng.choice(["SCREW", "MIRROR", "BEVEL"]), "steps": rng.randint(3, 20)}, t)
    if kind == 9:
        return step(rng.choice(["bpy.ops.curve.primitive_bezier_curve_add", "bpy.ops.curve.primitive_bezier_circle_add"]),
                    {"radius": round(rng.uniform(0.2, 2), 3)}, name="cv%d" % k)
    if kind == 10 and curves:
        return step(rng.choice(["object.data.bevel_depth", "object.data.extrude"]), {"value": round(rng.uniform(0, 0.2), 3)},
                    rng.choice(curves))
    if kind == 11:
        return step("bpy.ops.object.text_add", {"radius": 1.0}, name="tx%d" % k)
    if kind == 12 and texts:
        return step("object.data.body", {"value": rng.choice(["A", "hello", "24/7"])}, rng.choice(texts))
    return step("object.keyframe_insert", {"data_path": rng.choice(["location", "rotation_euler", "scale"]),
                                           "frame": rng.randint(1, 100), "interpolation": "LINEAR"}, t)


call("reset_scene", {})
call("run_plan", {"plan_id": "prop-seed", "steps": [step("bpy.ops.mesh.primitive_cube_add", {"size": 1}, name="keep")]})
base_fp, base_state, base_names = fingerprint.compute(props=False)["digest"], s_state(), sorted(bpy.data.objects.keys())
changed = 0
PLANS = 40
for i in range(PLANS):
    meshes, curves, texts, steps = ["keep"], [], [], []
    for k in range(rng.randint(1, 7)):
        st = random_step(k, meshes, curves, texts)
        steps.append(st)
        name = st.get("name", "")
        (meshes if name.startswith("m") else curves if name.startswith("cv") else texts if name else []).append(name)
    steps.append(FAIL)
    res = run(steps)
    changed += 1 if res.get("steps_done", 0) > 0 else 0
    ok = res.get("status") == "failed" and (res.get("rollback") or {}).get("exact") is True \
        and fingerprint.compute(props=False)["digest"] == base_fp and s_state() == base_state \
        and sorted(bpy.data.objects.keys()) == base_names and all(o.mode == "OBJECT" for o in bpy.data.objects)
    if not ok:
        expect(False, "random plan %d (seed %d) left the scene changed: %s / %s" % (i, SEED, steps, res))
        call("reset_scene", {})
        call("run_plan", {"plan_id": "prop-reseed%d" % i, "steps": [step("bpy.ops.mesh.primitive_cube_add", {"size": 1}, name="keep")]})
        base_fp, base_state = fingerprint.compute(props=False)["digest"], s_state()
expect(changed > PLANS // 2, "most random plans changed the scene before failing (%d of %d)" % (changed, PLANS))

# ---- edit steps refused out of bounds by the add-on too
refused(base + [step("bpy.ops.mesh.subdivide", {"number_cuts": 50}, "r")], "subdivide with 50 cuts", "number_cuts")
refused(base + [step("bpy.ops.mesh.spin", {"steps": 12, "angle": 1.0}, "r")], "spin without an axis", "axis")
refused(base + [step("bpy.ops.object.mode_set", {"mode": "SCULPT"}, "r")], "mode_set to SCULPT", "mode")
refused(base + [step("object.modifier", {"type": "BOOLEAN"}, "r")], "a boolean without an object", "needs object")
refused(base + [step("object.keyframe_insert", {"data_path": "data.energy", "frame": 1}, "r")], "a light key on a mesh",
        "has no energy")
refused(base + [step("object.keyframe_insert", {"data_path": "hide_render", "frame": 1, "index": 1}, "r")],
        "a component of a bool", "no components")
refused(base + [step("object.material", {"color": [1, 1, 1], "emission_strength": 5000}, "r")], "emission over 1000",
        "emission_strength")
expect(transaction.TXN.current is None, "no transaction left open")

if FAILURES:
    print("%d FAILED" % len(FAILURES))
    sys.exit(1)
print("all ok")
sys.exit(0)
