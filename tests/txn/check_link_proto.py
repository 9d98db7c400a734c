"""The add-on against its declaration (proto/blender_link.json), inside a real headless Blender:

  blender -b --factory-startup --python check_link_proto.py -- ADDON_DIR PALETTE_YAML

  * the dispatch table check: a command implemented but not declared, or declared but not
    implemented, raises ImportError (what stops the add-on from loading);
  * requests are checked against the declared argument types and limits before dispatch, with
    a clear error naming the command and the argument;
  * run_step and the palette's bounds from hello: a hello without bounds refuses every step
    with parameters and every builtin (fail closed) but still runs a bare operator; with
    bounds, the bounds received are the ones applied (tighter than palette.yaml's here, and a
    builtin's default taken from them); malformed bounds are refused;
  * the bounds for direct calls load from palette.yaml.

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
from blendmq import bounds, commands, link_proto        # noqa: E402
from blendmq.commands import handle_request             # noqa: E402
from blendmq.scene import cmd_reset_scene               # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILURES.append(what)


def call(cmd, args):
    return handle_request({"id": 7, "cmd": cmd, "args": args}, time.monotonic())[0]


def refused(reply, text):
    return reply.get("ok") is False and text in (reply.get("error") or "")


def step(operation, params=None):
    s = {"operation": operation}
    if params is not None:
        s["params"] = params
    return call("run_step", {"step": s})


# ---- the dispatch table against the declaration
commands.check_table(commands.COMMANDS)
expect(set(commands.COMMANDS) == set(link_proto.COMMANDS), "the add-on implements exactly the declared commands")
try:
    commands.check_table(dict(commands.COMMANDS, extra_cmd=commands.cmd_ping))
    expect(False, "an undeclared command raises at load")
except ImportError as e:
    expect("implemented but not declared: extra_cmd" in str(e), "an undeclared command raises at load: %s" % e)
missing = dict(commands.COMMANDS)
del missing["ping"]
try:
    commands.check_table(missing)
    expect(False, "a declared command without implementation raises at load")
except ImportError as e:
    expect("declared but not implemented: ping" in str(e), "a missing command raises at load: %s" % e)
expect(commands.READ_ONLY == {"scene_info", "object_info", "scene_names"}, "READ_ONLY is the declaration's")
expect(commands.NO_DEADLINE == {"plan_commit", "plan_rollback", "interrupted_ack", "cancel_plan"}, "NO_DEADLINE is the declaration's")

# ---- arguments checked before dispatch
expect(call("ping", {}).get("ok") is True, "ping runs")
r = call("scene_info", {"limit": "ten"})
expect(refused(r, "scene_info: limit must be an integer"), "scene_info limit type: %s" % r.get("error"))
r = call("plan_begin", {"plan_id": 5})
expect(refused(r, "plan_begin: plan_id must be a string of 1..64 characters"), "plan_id type: %s" % r.get("error"))
r = call("plan_begin", {"plan_id": "p" * 65})
expect(refused(r, "plan_id must be a string of 1..64"), "plan_id length: %s" % r.get("error"))
r = call("plan_begin", {"plan_id": "p-1", "steps": -1})
expect(refused(r, "plan_begin: steps must be an integer in 0..1048576"), "steps bounds: %s" % r.get("error"))
r = call("plan_commit", {})
expect(refused(r, "plan_commit: plan_id is required"), "required argument: %s" % r.get("error"))
r = call("interrupted_ack", {"ids": ["not-hex"]})
expect(refused(r, "interrupted_ack: ids must be a list of at most 32 items"), "array items: %s" % r.get("error"))
r = call("viewport_screenshot", {"area": "DESKTOP"})
expect(refused(r, "area must be one of VIEW_3D, WINDOW"), "enum: %s" % r.get("error"))
r = call("run_step", {"step": "cube"})
expect(refused(r, "run_step: step must be an object"), "run_step step type: %s" % r.get("error"))
r = call("bench_direct", {"operation": "primitive_monkey_add"})
expect(refused(r, "bench_direct: operation must be one of"), "bench_direct enum: %s" % r.get("error"))

# ---- a hello without bounds: fail closed
cmd_reset_scene({})
names = ["bpy.ops.mesh.primitive_cube_add", "object.material", "object.modifier", "object.location"]
bounds.set_palette(names, None)
r = step("bpy.ops.mesh.primitive_cube_add")
expect(r.get("ok") is True, "no bounds: a bare operator still runs (%s)" % r.get("error"))
r = step("bpy.ops.mesh.primitive_cube_add", {"size": 2.0})
expect(refused(r, "no parameter bounds at hello"), "no bounds: an operator with parameters is refused: %s"
       % r.get("error"))
r = step("object.material", {"color": [1, 0, 0]})
expect(refused(r, "no parameter bounds at hello"), "no bounds: a builtin is refused: %s" % r.get("error"))
r = step("object.modifier", {"type": "SUBSURF", "levels": 99})
expect(refused(r, "does not run unchecked"), "no bounds: a modifier cannot run unbounded: %s" % r.get("error"))

# ---- the bounds received are the ones applied
sent = {
    "bpy.ops.mesh.primitive_cube_add": {"size": {"type": "float", "min": 0.5, "max": 3.0, "default": 2.0}},
    "object.material": {"color": {"type": "color", "required": True, "min": 0.0, "max": 1.0},
                        "metallic": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.25},
                        "roughness": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.5}},
    "object.modifier": {"type": {"type": "enum", "items": ["SUBSURF", "BEVEL"], "required": True},
                        "levels": {"type": "int", "min": 0, "max": 2, "default": 2},
                        "width": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.1},
                        "segments": {"type": "int", "min": 1, "max": 8, "default": 1}},
    "object.location": {"value": {"type": "vec3", "min": -10.0, "max": 10.0, "required": True}},
}
expect(bounds.check_bounds(sent) is None, "well-formed bounds pass the hello check")
bounds.set_palette(names, sent)
r = step("bpy.ops.mesh.primitive_cube_add", {"size": 5.0})
expect(refused(r, "size must be a number in 0.5..3"), "an operator parameter out of the sent bounds: %s" % r.get("error"))
r = step("bpy.ops.mesh.primitive_cube_add", {"size": 2.5, "sise": 1})
expect(refused(r, "unknown parameter sise"), "an unknown parameter: %s" % r.get("error"))
r = step("bpy.ops.mesh.primitive_cube_add", {"size": 2.5})
expect(r.get("ok") is True, "an operator within bounds runs (%s)" % r.get("error"))
cube = (r.get("result") or {}).get("object")
r = step("object.modifier", {"type": "SUBSURF", "levels": 3})
expect(refused(r, "levels must be an integer in 0..2"), "the sent bounds, tighter than palette.yaml's, apply: %s"
       % r.get("error"))
r = step("object.modifier", {"type": "MIRROR"})
expect(refused(r, "type must be one of SUBSURF, BEVEL"), "the sent enum items apply: %s" % r.get("error"))
r = step("object.modifier", {"type": "SUBSURF"})
mods = [m for m in bpy.data.objects[cube].modifiers if m.type == "SUBSURF"] if cube else []
expect(r.get("ok") is True and mods and mods[0].levels == 2, "a builtin takes its default from the sent bounds (%s)"
       % r.get("error"))
r = step("object.material", {"color": [2, 0, 0]})
expect(refused(r, "color must be [r, g, b] or [r, g, b, a], each in 0..1"), "a colour out of bounds: %s"
       % r.get("error"))
r = step("object.material", {"color": [1, 0, 0]})
mat = bpy.data.materials.get(cube + "_mat") if cube else None
expect(r.get("ok") is True and mat is not None and abs(mat.metallic - 0.25) < 1e-6,
       "object.material's metallic default comes from the bounds (%s)" % r.get("error"))
r = step("object.location", {"value": [0, 0, 50]})
expect(refused(r, "value must be [x, y, z], each in -10..10"), "a vec3 out of bounds: %s" % r.get("error"))
r = step("object.location", {})
expect(refused(r, "value is required"), "a required parameter: %s" % r.get("error"))

# ---- malformed bounds are refused at hello
for bad, why in (([], "not an object"), ({"op": []}, "params not an object"),
                 ({"op": {"p": {"type": "weird"}}}, "unknown type"),
                 ({"op": {"p": {"type": "int", "min": "0"}}}, "min not a number"),
                 ({"op": {"p": {"type": "enum"}}}, "enum without items"),
                 ({"op": {"p": {"type": "int", "maximum": 3}}}, "unknown key")):
    expect(bounds.check_bounds(bad) is not None, "malformed bounds refused (%s)" % why)

# ---- direct calls: the bounds from palette.yaml
bounds.set_palette(None, None)
expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads for direct calls")
r = step("object.modifier", {"type": "SUBSURF", "levels": 4})
expect(refused(r, "levels must be an integer in 0..3"), "palette.yaml's bounds apply to direct calls: %s"
       % r.get("error"))
expect(not bounds.load_palette_file(os.path.join(ADDON_DIR, "no-such-palette.yaml")), "a missing palette file is reported")

cmd_reset_scene({})
print("%d failure(s)" % len(FAILURES))
sys.stdout.flush()
os._exit(1 if FAILURES else 0)
