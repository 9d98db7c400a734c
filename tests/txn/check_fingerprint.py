"""The scene fingerprint (issue 23) inside a real headless Blender:

  blender -b --factory-startup --python check_fingerprint.py -- ADDON_DIR BLENDER

  * determinism: the state saved with state.save and loaded in two other Blenders (processes
    of their own) gives the same digest there as here, ID by ID; loading it here again too;
  * state.save keeps data with no users and leaves the live fingerprint as it was;
  * sensitivity: moving one vertex, changing a material's colour, the render resolution, adding
    an orphan mesh, setting a custom property, a compositor node, a world colour: each changes
    the digest, and the diff names the ID and the property;
  * the standalone modules import nothing from the blendmq package.

Exit 0 when every expectation holds, 1 otherwise (each failure printed).
"""
import json
import os
import subprocess
import sys
import tempfile

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, BLENDER = argv[0], argv[1]
PKG = os.path.join(ADDON_DIR, "blendmq")
sys.dont_write_bytecode = True
sys.path.insert(0, PKG)         # standalone, as the sandbox runner imports them

import bpy                      # noqa: E402
import fingerprint              # noqa: E402
import state                    # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


for name in ("fingerprint.py", "state.py"):
    text = open(os.path.join(PKG, name)).read()
    expect("from ." not in text and "import blendmq" not in text and "from blendmq" not in text,
           "%s is standalone (no import from the blendmq package)" % name)

# ---- a scene with a bit of everything
for o in list(bpy.data.objects):
    bpy.data.objects.remove(o)
for m in list(bpy.data.meshes):
    bpy.data.meshes.remove(m)
bpy.ops.mesh.primitive_cube_add()
cube = bpy.context.object
mat = bpy.data.materials.new("Paint")
mat.use_nodes = True
cube.data.materials.append(mat)
cube.modifiers.new("bev", "BEVEL")
bpy.ops.object.light_add(type="SPOT")
bpy.data.meshes.new("orphan_a")
bpy.data.texts.new("notes").write("hello")
bpy.context.scene["custom"] = {"a": [1, 2, 3], "b": "x"}
scene = bpy.context.scene
scene.use_nodes = True
world = bpy.data.worlds.new("Sky")
world.use_nodes = True
scene.world = world

a = fingerprint.compute()
b = fingerprint.compute()
expect(a["digest"] == b["digest"] and len(a["digest"]) == 64, "the same state twice: the same digest")
expect(any(k.startswith("MESH:orphan_a") for k in a["ids"]), "data with no users is covered")
expect(not any(k.startswith(("SCREEN:", "WINDOWMANAGER:", "WORKSPACE:")) for k in a["ids"]), "UI data is not")
for key in ("OBJECT:Cube", "MESH:Cube", "MATERIAL:Paint", "SCENE:Scene", "WORLD:Sky", "TEXT:notes", "LIGHT:Spot"):
    expect(key in a["ids"], "%s is covered" % key)
expect("nodes" not in a["ids"]["MATERIAL:Paint"]["props"] and "node_tree" in a["ids"]["MATERIAL:Paint"]["props"],
       "a material's node tree is walked as part of it")

tmp = tempfile.mkdtemp(prefix="bmq-fp-")
path = os.path.join(tmp, "state.blend")
side = state.save(path)
expect(["meshes", "orphan_a"] in side["fake_users"], "state.save records the orphan it kept: %s" % side["fake_users"])
expect(fingerprint.compute()["digest"] == a["digest"], "state.save leaves the live fingerprint unchanged")
expect(not bpy.data.meshes["orphan_a"].use_fake_user, "and the orphan has no fake user again")

# ---- two other processes load it: the same digest, ID by ID
helper = os.path.join(tmp, "helper.py")
with open(helper, "w") as f:
    f.write("import sys, json\nsys.path.insert(0, %r)\nimport fingerprint, state\n"
            "state.load(%r)\nfp = fingerprint.compute()\n"
            "open(sys.argv[-1], 'w').write(json.dumps({'digest': fp['digest'], 'ids': fp['ids']}))\n" % (PKG, path))
others = []
for k in range(2):
    out = os.path.join(tmp, "other-%d.json" % k)
    p = subprocess.run([BLENDER, "-b", "--factory-startup", "--python-exit-code", "1", "--python", helper, "--", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    try:
        others.append(json.load(open(out)))
    except (OSError, ValueError):
        others.append({})
        print(p.stdout.decode("utf-8", "replace")[-2000:])
for k, other in enumerate(others):
    expect(other.get("digest") == a["digest"], "Blender process %d loads it with the same digest" % (k + 1))
    if other.get("ids"):
        d = fingerprint.diff(a, other)
        expect(not d["added"] and not d["removed"] and not d["changed"], "and the same per-ID digests: %s" % str(d)[:400])
state.load(path)
expect(fingerprint.compute()["digest"] == a["digest"], "loaded here again: the same digest")
expect(not bpy.data.meshes["orphan_a"].use_fake_user, "the loaded orphan has its fake user taken away")


# ---- sensitivity: each change moves the digest, and the diff names it
def changes(what, key, prop, change):
    before = fingerprint.compute()
    change()
    after = fingerprint.compute()
    d = fingerprint.diff(before, after)
    named = [c for c in d["changed"] if c["id"] == key]
    if prop is None:
        hit = key in d["added"]
    else:
        hit = bool(named) and prop in named[0]["props"]
    expect(after["digest"] != before["digest"] and hit, "%s: the digest moves and the diff names %s%s (%s)"
           % (what, key, "" if prop is None else "." + prop, str(d)[:300]))


def move_vertex():
    bpy.data.meshes["Cube"].vertices[3].co.x += 1e-4


changes("a vertex moved", "MESH:Cube", "vertices", move_vertex)
changes("a material colour", "MATERIAL:Paint", "node_tree", lambda: setattr(
    bpy.data.materials["Paint"].node_tree.nodes["Principled BSDF"].inputs["Base Color"], "default_value", (1, 0, 0, 1)))
changes("the viewport colour", "MATERIAL:Paint", "diffuse_color",
        lambda: setattr(bpy.data.materials["Paint"], "diffuse_color", (0, 1, 0, 1)))
changes("the render resolution", "SCENE:Scene", "render", lambda: setattr(bpy.context.scene.render, "resolution_x", 1001))
changes("an orphan mesh", "MESH:orphan_b", None, lambda: bpy.data.meshes.new("orphan_b"))
changes("a custom property", "OBJECT:Cube", "[custom]", lambda: bpy.data.objects["Cube"].__setitem__("k", 5))
if hasattr(bpy.types.Scene, "node_tree") or "node_tree" in bpy.types.Scene.bl_rna.properties:
    changes("a compositor node", "SCENE:Scene", "node_tree",
            lambda: bpy.context.scene.node_tree.nodes.new("CompositorNodeBlur"))
else:       # Blender 5: the compositor is a node group the scene names (issue 30)
    bpy.context.scene.compositing_node_group = bpy.data.node_groups.new("Comp", "CompositorNodeTree")
    changes("a compositor node", "NODETREE:Comp", "nodes",
            lambda: bpy.data.node_groups["Comp"].nodes.new("CompositorNodeBlur"))
changes("a world colour", "WORLD:Sky", "color", lambda: setattr(bpy.data.worlds["Sky"], "color", (0.1, 0.2, 0.3)))
changes("a modifier setting", "OBJECT:Cube", "modifiers",
        lambda: setattr(bpy.data.objects["Cube"].modifiers["bev"], "width", 0.33))
changes("a text's content", "TEXT:notes", "lines", lambda: bpy.data.texts["notes"].write(" world"))
changes("a uv coordinate", "MESH:Cube", "uv_layers",
        lambda: bpy.data.meshes["Cube"].uv_layers[0].data[0].uv.__setitem__(0, 0.77))
changes("the frame range", "SCENE:Scene", "frame_end", lambda: setattr(bpy.context.scene, "frame_end", 99))
changes("a light's energy", "LIGHT:Spot", "energy", lambda: setattr(bpy.data.lights["Spot"], "energy", 77.0))

d = fingerprint.diff({"ids": {}}, fingerprint.compute(), limit=3)
expect(len(d["added"]) == 3 and d["added_count"] > 3, "diff lists are bounded, counts exact: %d" % d["added_count"])

try:
    fingerprint.compute(limit_ms=0.0001)
    expect(False, "limit_ms: compute stops when it runs past it")
except fingerprint.FingerprintLimit:
    expect(True, "limit_ms: compute stops when it runs past it")

print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
