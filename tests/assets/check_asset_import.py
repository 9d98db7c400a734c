"""Assets from blobs (issue 16) inside a real headless Blender:

  blender -b --factory-startup --python check_asset_import.py -- ADDON_DIR PALETTE_YAML

Fixtures are made here with Blender's own exporters and image writers (a textured cube as
.gltf+.bin+.png, .glb, .fbx, .obj+.mtl; maps as JPG/PNG; an HDR and an EXR), the scene is
reset, then each is staged (asset_stage with the files' bytes as the request's blob) and
imported by run_plan steps (asset.import):

  * asset_stage is declared (keeps_names) and implemented;
  * a model (glTF, GLB, FBX, OBJ): every imported object under one root empty named as the
    step asked (or after the asset id), the step's object is that root, images packed;
  * a texture: a material on the target with its maps wired, by the map names the executor
    stages (proto/assets.json: diffuse x ao -> Base Color, roughness -> Roughness and metallic
    -> Metallic as Non-Color, normal -> Normal Map -> Normal, displacement -> Displacement ->
    the output); a map name the declaration does not hold ("rough") is refused at staging;
  * an HDRI (.hdr and .exr): the scene's world is Environment Texture -> Background;
  * no private directory is left behind; a bundle may be imported twice; at most 8 bundles;
  * a plan whose later step fails is rolled back: objects, meshes, images, materials, worlds
    and node groups it added are gone, the world and the target's material are back;
  * hostile bundles are refused before anything is kept: '..', absolute, backslash, empty
    component, NUL, a lying sha256, sizes that do not add up, main not among the files; an
    unstaged key fails the step; a file that is not what its format says fails the import
    and leaves nothing behind;
  * over the real link (background runtime): the request's blob reaches asset_stage.

Exit 0 when every expectation holds, 1 otherwise (each failure printed)."""
import hashlib
import os
import shutil
import sys
import tempfile
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, PALETTE = argv[0], argv[1]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)

import bpy                                                      # noqa: E402
from blendmq import asset_import, asset_stage, bounds, commands, link_proto, transaction  # noqa: E402
from blendmq.commands import handle_request                     # noqa: E402
from blendmq.scene import cmd_reset_scene                       # noqa: E402

FAILURES = []
TEST_TMP = tempfile.mkdtemp(prefix="bmq-asset-test-")
tempfile.tempdir = TEST_TMP         # the add-on's private directories land here: another run cannot interfere
# asset.import's bounds as the palette declares them (what an executor sends at hello), for a
# palette.yaml that does not carry the operation yet.
ASSET_BOUNDS = {
    "source": {"type": "enum", "items": ["polyhaven", "sketchfab", "hyper3d"], "required": True},
    "id": {"type": "string", "max_len": 64, "required": True},
    "type": {"type": "enum", "items": ["model", "hdri", "texture"], "required": True},
    "resolution": {"type": "enum", "items": ["1k", "2k", "4k", "8k"]},
    "format": {"type": "enum", "items": ["gltf", "glb", "fbx", "obj", "hdr", "exr", "jpg", "png"]},
}
DATA = ("objects", "meshes", "materials", "images", "worlds", "node_groups", "collections", "actions", "armatures")


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILURES.append(what)


def call(cmd, args, blob=b""):
    return handle_request({"id": 7, "cmd": cmd, "args": args}, time.monotonic(), blob=blob)[0]


def names():
    return sorted(o.name for o in bpy.data.objects)


def inventory():
    return {kind: sorted(getattr(bpy.data, kind).keys()) for kind in DATA}


def private_dirs():
    return sorted(n for n in os.listdir(tempfile.gettempdir()) if n.startswith("blendmq-asset-"))


# ---------------------------------------------------------------------------- fixtures

FIX = tempfile.mkdtemp(prefix="bmq-asset-fixtures-")


def save_image(name, fmt, color, float_buffer=False, size=8):
    scene = bpy.context.scene
    img = bpy.data.images.new(name, size, size, float_buffer=float_buffer)
    img.pixels = list(color) * (size * size)
    settings = scene.render.image_settings
    settings.file_format = fmt
    if fmt == "OPEN_EXR":
        settings.color_depth = "16"
    elif fmt in ("PNG", "JPEG"):
        settings.color_depth = "8"
    path = os.path.join(FIX, name)
    img.save_render(path, scene=scene)
    bpy.data.images.remove(img)
    return path


def export_cube():
    cmd_reset_scene({})
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    cube = bpy.context.view_layer.objects.active
    cube.name = "FixtureCube"
    mat = bpy.data.materials.new("FixtureMat")
    mat.use_nodes = True
    tex = mat.node_tree.nodes.new("ShaderNodeTexImage")
    tex.image = bpy.data.images.load(save_image("fixture_tex.png", "PNG", (0.8, 0.2, 0.1, 1.0)))
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    mat.node_tree.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    cube.data.materials.append(mat)
    out = {}
    for sub in ("gltf", "glb", "fbx", "obj"):
        os.makedirs(os.path.join(FIX, sub))
    bpy.ops.export_scene.gltf(filepath=os.path.join(FIX, "gltf", "cube.gltf"), export_format="GLTF_SEPARATE")
    bpy.ops.export_scene.gltf(filepath=os.path.join(FIX, "glb", "cube.glb"), export_format="GLB")
    bpy.ops.export_scene.fbx(filepath=os.path.join(FIX, "fbx", "cube.fbx"))
    bpy.ops.wm.obj_export(filepath=os.path.join(FIX, "obj", "cube.obj"))
    for sub in ("gltf", "glb", "fbx", "obj"):
        out[sub] = sorted(os.listdir(os.path.join(FIX, sub)))
    cmd_reset_scene({})
    for img in list(bpy.data.images):
        bpy.data.images.remove(img)
    for m in list(bpy.data.materials):
        if m.users == 0:
            bpy.data.materials.remove(m)
    return out


EXPORTED = export_cube()
expect(EXPORTED["gltf"] == ["cube.bin", "cube.gltf", "fixture_tex.png"] and EXPORTED["obj"] == ["cube.mtl", "cube.obj"],
       "fixtures: glTF + bin + png, glb, fbx, obj + mtl (%s)" % EXPORTED)
MAPS = {                # the executor's staged map names (proto/assets.json), as it sends them
    "diffuse": save_image("bricks_diff_1k.jpg", "JPEG", (0.6, 0.3, 0.2, 1.0)),
    "ao": save_image("bricks_ao_1k.jpg", "JPEG", (0.9, 0.9, 0.9, 1.0)),
    "roughness": save_image("bricks_rough_1k.jpg", "JPEG", (0.7, 0.7, 0.7, 1.0)),
    "metallic": save_image("bricks_metal_1k.png", "PNG", (0.0, 0.0, 0.0, 1.0)),
    "normal": save_image("bricks_nor_gl_1k.png", "PNG", (0.5, 0.5, 1.0, 1.0)),
    "displacement": save_image("bricks_disp_1k.png", "PNG", (0.5, 0.5, 0.5, 1.0)),
}
HDR = save_image("sky_1k.hdr", "HDR", (2.0, 1.5, 1.0, 1.0), float_buffer=True)
EXR = save_image("sky_1k.exr", "OPEN_EXR", (2.0, 1.5, 1.0, 1.0), float_buffer=True)
cmd_reset_scene({})


def read(path):
    with open(path, "rb") as f:
        return f.read()


def bundle(files):
    """(files arg, blob) from [(relative path, source file, map or None)]."""
    spec, blob = [], b""
    for rel, src, kind in files:
        data = read(src)
        entry = {"path": rel, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        if kind:
            entry["map"] = kind
        spec.append(entry)
        blob += data
    return spec, blob


def stage(key, main, files):
    spec, blob = bundle(files)
    return call("asset_stage", {"key": key, "main": main, "files": spec}, blob)


def folder(sub):
    return [(n, os.path.join(FIX, sub, n), None) for n in EXPORTED[sub]]


def step(params, **extra):
    s = {"operation": "asset.import", "params": params}
    s.update(extra)
    return s


def run(plan_id, steps):
    r = call("run_plan", {"plan_id": plan_id, "steps": steps})
    return r, r.get("result") or {}


def descendants(root):
    return [o for o in bpy.data.objects if o != root and top(o) == root]


def top(o):
    while o.parent is not None:
        o = o.parent
    return o


expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads")
# The add-on imports every format of every kind; which source serves which is the validator's
# business (common/palette/plan_assets.c), and palette.yaml lists only the sources served today.
bounds.s_Palette.bounds = dict(bounds.s_Palette.bounds, **{"asset.import": ASSET_BOUNDS})
PALETTE_BOUNDS = dict(bounds.s_Palette.bounds)

# ---- the declaration
decl = link_proto.COMMANDS.get("asset_stage")
expect(decl is not None and "asset_stage" in link_proto.KEEPS_NAMES and decl["reply"] == ("staged", "files", "bytes"),
       "asset_stage is declared (keeps_names; reply staged, files, bytes)")
expect(commands.COMMANDS.get("asset_stage") is asset_stage.cmd_asset_stage, "and implemented")

TMP_BEFORE = private_dirs()
with asset_import.s_private_dir() as d:
    st = os.stat(d)
    expect(st.st_mode & 0o777 == 0o700 and st.st_uid == os.getuid() and d.startswith(TEST_TMP),
           "the private directory is 0700 and Blender's user's (%o)" % (st.st_mode & 0o777))
expect(not os.path.exists(d), "and gone once the import ends")
KEY_GLTF = {"source": "polyhaven", "id": "chair_01", "type": "model", "resolution": "2k", "format": "gltf"}
r = stage(KEY_GLTF, "cube.gltf", folder("gltf"))
expect(r.get("ok") and r["result"] == {"staged": True, "files": 3,
                                        "bytes": sum(os.path.getsize(f) for _n, f, _m in folder("gltf"))},
       "a glTF bundle (gltf, bin, png) is staged: %s" % r)

# ---- models
before = inventory()
r, res = run("m1", [step({"source": "polyhaven", "id": "chair_01", "type": "model", "resolution": "2k"}, name="chair")])
expect(res.get("status") == "done", "the glTF import runs (format defaults to gltf): %s" % r)
chair = bpy.data.objects.get("chair")
kids = descendants(chair) if chair else []
expect(chair is not None and chair.type == "EMPTY" and chair.parent is None, "one root empty named chair")
expect(len(kids) >= 1 and all(o.type == "MESH" for o in kids), "the imported cube is under it: %s" % [o.name for o in kids])
made = set(inventory()["objects"]) - set(before["objects"])
expect(made == {"chair"} | {o.name for o in kids}, "everything the import made is under the root: %s" % sorted(made))
new_images = [bpy.data.images[n] for n in set(inventory()["images"]) - set(before["images"])]
expect(new_images and all(i.packed_file is not None for i in new_images), "the glTF's texture is packed: %s"
       % [(i.name, i.filepath) for i in new_images])
expect(kids and abs(kids[0].dimensions.x - 2.0) < 1e-3, "the cube keeps its size")
expect(private_dirs() == TMP_BEFORE, "its private directory is gone (%s)" % private_dirs())

r, res = run("m1b", [step({"source": "polyhaven", "id": "chair_01", "type": "model", "resolution": "2k"}, name="chair")])
expect(res.get("status") == "done" and "chair.001" in names(), "the same bundle imports again (kept): %s" % r)

key = {"source": "sketchfab", "id": "0123456789abcdef0123456789abcdef", "type": "model", "format": "glb"}
expect(stage(key, "cube.glb", folder("glb")).get("ok"), "a GLB bundle without resolution is staged")
r, res = run("m2", [step({"source": "sketchfab", "id": key["id"], "type": "model", "format": "glb"}, name="car")])
car = bpy.data.objects.get("car")
expect(res.get("status") == "done" and car is not None and len(descendants(car)) >= 1, "GLB: root car with the cube: %s" % r)

key = {"source": "polyhaven", "id": "crate_02", "type": "model", "resolution": "1k", "format": "fbx"}
expect(stage(key, "cube.fbx", folder("fbx")).get("ok"), "an FBX bundle is staged")
r, res = run("m3", [step(dict(key))])
crate = bpy.data.objects.get("crate_02")
expect(res.get("status") == "done" and crate is not None and crate.type == "EMPTY" and len(descendants(crate)) >= 1,
       "FBX without a name: the root is named after the asset id: %s" % r)

key = {"source": "polyhaven", "id": "stool", "type": "model", "resolution": "1k", "format": "obj"}
expect(stage(key, "cube.obj", folder("obj")).get("ok"), "an OBJ bundle (obj + mtl) is staged")
r, res = run("m4", [step(dict(key), name="stool")])
stool = bpy.data.objects.get("stool")
kids = descendants(stool) if stool else []
expect(res.get("status") == "done" and len(kids) == 1 and kids[0].type == "MESH", "OBJ: root stool with the cube: %s" % r)
expect(kids and kids[0].active_material is not None, "the .mtl's material came along")
expect(private_dirs() == TMP_BEFORE, "no private directory is left behind")

# ---- a texture on a target
cmd_reset_scene({})
bpy.ops.mesh.primitive_cube_add()
bpy.context.view_layer.objects.active.name = "box"
key = {"source": "polyhaven", "id": "bricks", "type": "texture", "resolution": "1k", "format": "jpg"}
files = [(os.path.basename(p), p, kind) for kind, p in MAPS.items()]
from blendmq import asset_proto                 # noqa: E402
expect(set(MAPS) == asset_proto.MAP_NAMES, "the fixture carries every declared map: %s" % sorted(asset_proto.MAP_NAMES))
bad = [(n, p, "rough" if k == "roughness" else k) for n, p, k in files]
r_bad = stage(key, "bricks_diff_1k.jpg", bad)
expect(not r_bad.get("ok") and "map rough is not one of" in (r_bad.get("error") or ""),
       "an undeclared map name is refused at staging, not lost at import: %s" % r_bad.get("error"))
expect(stage(key, "bricks_diff_1k.jpg", files).get("ok"), "a texture bundle (six maps) is staged")
r, res = run("t1", [step({"source": "polyhaven", "id": "bricks", "type": "texture", "resolution": "1k"}, target="box")])
box = bpy.data.objects["box"]
mat = box.active_material
expect(res.get("status") == "done" and mat is not None and mat.use_nodes, "the texture makes a material on box: %s" % r)


def linked_from(socket_):
    return socket_.links[0].from_node if socket_.is_linked else None


if mat is not None:
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    base = linked_from(bsdf.inputs["Base Color"])
    expect(base is not None and base.type == "MIX_RGB" and base.blend_type == "MULTIPLY"
           and linked_from(base.inputs["Color1"]).image.name.startswith("bricks_diff")
           and linked_from(base.inputs["Color2"]).image.name.startswith("bricks_ao"),
           "Base Color = diffuse x ao")
    rough, metal = linked_from(bsdf.inputs["Roughness"]), linked_from(bsdf.inputs["Metallic"])
    expect(rough is not None and rough.image.name.startswith("bricks_rough")
           and rough.image.colorspace_settings.name == "Non-Color", "Roughness from the roughness map, Non-Color")
    expect(metal is not None and metal.image.name.startswith("bricks_metal")
           and metal.image.colorspace_settings.name == "Non-Color", "Metallic from the metallic map, Non-Color")
    normal = linked_from(bsdf.inputs["Normal"])
    nor_tex = linked_from(normal.inputs["Color"]) if normal is not None else None
    expect(normal is not None and normal.type == "NORMAL_MAP" and nor_tex is not None
           and nor_tex.image.name.startswith("bricks_nor_gl") and nor_tex.image.colorspace_settings.name == "Non-Color",
           "Normal from the normal map through a Normal Map node")
    out = next(n for n in mat.node_tree.nodes if n.type == "OUTPUT_MATERIAL")
    disp = linked_from(out.inputs["Displacement"])
    disp_tex = linked_from(disp.inputs["Height"]) if disp is not None else None
    expect(disp is not None and disp.type == "DISPLACEMENT" and disp_tex is not None
           and disp_tex.image.name.startswith("bricks_disp") and disp_tex.image.colorspace_settings.name == "Non-Color",
           "Displacement from the displacement map through a Displacement node")
    images = [n.image for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"]
    expect(len(images) == 6 and all(i.packed_file is not None and i.size[0] == 8 for i in images),
           "the six images are packed and readable")
r, res = run("t2", [step({"source": "polyhaven", "id": "bricks", "type": "texture", "resolution": "1k"})])
expect(res.get("status") == "failed" and "target" in (res.get("error") or ""), "a texture without target: %s" % res.get("error"))

# ---- HDRIs
for fmt, path in (("hdr", HDR), ("exr", EXR)):
    key = {"source": "polyhaven", "id": "sky", "type": "hdri", "resolution": "1k", "format": fmt}
    expect(stage(key, os.path.basename(path), [(os.path.basename(path), path, None)]).get("ok"), "an %s is staged" % fmt)
    old_world = bpy.context.scene.world
    params = {"source": "polyhaven", "id": "sky", "type": "hdri", "resolution": "1k"}
    if fmt != "hdr":
        params["format"] = fmt
    r, res = run("h-" + fmt, [step(params)])
    world = bpy.context.scene.world
    bg = next((n for n in world.node_tree.nodes if n.type == "BACKGROUND"), None) if world and world.use_nodes else None
    env = linked_from(bg.inputs["Color"]) if bg is not None else None
    expect(res.get("status") == "done" and world is not None and world != old_world, "%s: a new world: %s" % (fmt, r))
    expect(env is not None and env.type == "TEX_ENVIRONMENT" and env.image.packed_file is not None
           and env.image.size[0] == 8, "%s: Environment Texture -> Background, packed" % fmt)
expect(private_dirs() == TMP_BEFORE, "still no private directory left behind")

# ---- a failing plan is rolled back, imports and all
cmd_reset_scene({})
bpy.ops.mesh.primitive_cube_add()
bpy.context.view_layer.objects.active.name = "box2"
world_before = bpy.context.scene.world
before = inventory()
slots_before = [s.material for s in bpy.data.objects["box2"].material_slots]
plan = [step(dict(KEY_GLTF), name="chair"),
        step({"source": "polyhaven", "id": "bricks", "type": "texture", "resolution": "1k"}, target="box2"),
        step({"source": "polyhaven", "id": "sky", "type": "hdri", "resolution": "1k"}),
        {"operation": "object.location", "target": "nothing-here", "params": {"value": [1, 1, 1]}}]
r, res = run("rb", plan)
expect(res.get("status") == "failed" and res.get("failed_step") == 4, "the plan fails at its last step: %s" % res)
after = inventory()
expect(after == before, "rolled back: no object, mesh, material, image, world, node group, collection, action "
       "or armature it added is left (%s)" % {k: sorted(set(after[k]) ^ set(before[k])) for k in DATA if after[k] != before[k]})
expect(bpy.context.scene.world == world_before, "the scene's world is back")
expect([s.material for s in bpy.data.objects["box2"].material_slots] == slots_before, "box2's material is back")
expect(transaction.TXN.current is None, "no transaction left open")

# ---- hostile bundles: refused, nothing kept
key = {"source": "polyhaven", "id": "evil", "type": "model", "resolution": "1k", "format": "gltf"}
spec, blob = bundle(folder("gltf"))


def refused(files, blob_, what, needle, main="cube.gltf"):
    held = dict(asset_stage.STAGED.bundles)
    r = call("asset_stage", {"key": key, "main": main, "files": files}, blob_)
    expect(r.get("ok") is False and needle in (r.get("error") or "") and asset_stage.STAGED.bundles == held,
           "%s is refused, nothing staged: %s" % (what, r.get("error")))


for bad, needle in (("../cube.bin", "'..'"), ("a/../cube.bin", "'..'"), ("/etc/cube.bin", "absolute"),
                    ("sub\\cube.bin", "backslash"), ("sub//cube.bin", "empty"), ("cube\x00.bin", "NUL"),
                    ("./cube.bin", "'.'")):
    refused([dict(spec[0]), dict(spec[1], path=bad), dict(spec[2])], blob, "path %r" % bad, needle)
refused([dict(spec[0]), dict(spec[1], sha256="0" * 64), dict(spec[2])], blob, "a lying sha256", "sha256")
refused([dict(spec[0], size=spec[0]["size"] + 1), spec[1], spec[2]], blob, "sizes that do not add up", "add up")
refused(spec, blob + b"x", "a blob longer than the files", "add up")
refused(spec, blob, "a main that is not a file", "not one of the files", main="other.gltf")
refused([spec[0], spec[1], dict(spec[2], path="cube.bin")], blob, "a path given twice", "twice")
refused([spec[0], spec[1], dict(spec[2], path="cube.bin/x.png")], blob, "a file that is also a folder", "folder")
r = call("asset_stage", {"key": dict(key, source="elsewhere"), "main": "cube.gltf", "files": spec}, blob)
expect(r.get("ok") is False and "source" in r.get("error", ""), "an unknown source: %s" % r.get("error"))
r = call("asset_stage", {"key": dict(key, format="hdr"), "main": "cube.gltf", "files": spec}, blob)
expect(r.get("ok") is False and "model comes as" in r.get("error", ""), "a format the type has not: %s" % r.get("error"))
r = call("asset_stage", {"key": key, "main": "cube.gltf", "files": spec})
expect(r.get("ok") is False and "blob holds 0" in r.get("error", ""), "no blob at all: %s" % r.get("error"))

before = inventory()
r, res = run("u1", [step({"source": "polyhaven", "id": "never_staged", "type": "model", "resolution": "1k"}, name="x")])
expect(res.get("status") == "failed" and "not staged" in (res.get("error") or "") and inventory() == before,
       "an unstaged key fails the step, nothing imported: %s" % res.get("error"))
r, res = run("u2", [step({"source": "polyhaven", "id": "chair_01", "type": "model", "resolution": "4k"})])
expect(res.get("status") == "failed" and "not staged" in (res.get("error") or ""), "another resolution is another key")

# A file that is not what it says: the import fails and leaves nothing behind, even outside a plan.
garbage = b"{ this is not glTF"
gkey = {"source": "polyhaven", "id": "broken", "type": "model", "resolution": "1k", "format": "gltf"}
r = call("asset_stage", {"key": gkey, "main": "broken.gltf", "files": [
    {"path": "broken.gltf", "size": len(garbage), "sha256": hashlib.sha256(garbage).hexdigest()}]}, garbage)
expect(r.get("ok"), "a garbage glTF stages (its hash is right)")
before = inventory()
r = call("run_step", {"step": step(dict(gkey), name="broken")})
expect(r.get("ok") is False and "asset.import" in (r.get("error") or "") and inventory() == before,
       "it fails to import, nothing is left: %s" % (r.get("error") or "")[:200])
tkey = {"source": "polyhaven", "id": "fake", "type": "texture", "resolution": "1k", "format": "jpg"}
r = call("asset_stage", {"key": tkey, "main": "fake.jpg", "files": [
    {"path": "fake.jpg", "size": len(garbage), "sha256": hashlib.sha256(garbage).hexdigest(), "map": "diffuse"}]}, garbage)
before = inventory()
r = call("run_step", {"step": step(dict(tkey), target="box2")})
expect(r.get("ok") is False and "image" in (r.get("error") or "") and inventory() == before,
       "a texture that is no image fails, no material or image is left: %s" % r.get("error"))
expect(private_dirs() == TMP_BEFORE, "failed imports remove their private directory too")

# ---- bounded: at most 8 bundles, the least recently used dropped
asset_stage.STAGED.clear()
for i in range(9):
    data = b"img%d" % i
    r = call("asset_stage", {"key": dict(tkey, id="t%d" % i), "main": "t.jpg",
                             "files": [{"path": "t.jpg", "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}]},
             data)
    if i == 1:
        asset_stage.STAGED.get(("polyhaven", "t0", "texture", "1k", "jpg"))      # t0 used: t1 is the oldest now
held = sorted(k[1] for k in asset_stage.STAGED.bundles)
expect(held == ["t0", "t2", "t3", "t4", "t5", "t6", "t7", "t8"], "8 bundles kept, the least recently used dropped: %s" % held)


# ---- chunks: an asset larger than one frame is staged piece by piece
asset_stage.STAGED.clear()
ckey = {"source": "polyhaven", "id": "chunky", "type": "model", "resolution": "1k", "format": "gltf"}
cspec, cblob = bundle(folder("gltf"))
total = len(cblob)


def chunk(offset, piece, key_=None, files=None, total_=None):
    return call("asset_stage", {"key": key_ or ckey, "main": "cube.gltf", "files": files or cspec,
                                "offset": offset, "total": total if total_ is None else total_}, piece)


cut = [0, 7, total // 2, total - 1, total]
replies = [chunk(a, cblob[a:b]) for a, b in zip(cut, cut[1:])]
expect(all(r.get("ok") for r in replies) and [r["result"]["staged"] for r in replies] == [False, False, False, True]
       and [r["result"]["bytes"] for r in replies] == cut[1:],
       "four chunks: staged false with the bytes so far, then true (%s)" % [r.get("result") for r in replies])
got = asset_stage.STAGED.get(("polyhaven", "chunky", "model", "1k", "gltf"))
expect(got is not None and bytes(got.blob) == cblob, "the chunked bundle holds exactly the bytes sent")
r, res = run("c1", [step({"source": "polyhaven", "id": "chunky", "type": "model", "resolution": "1k"}, name="chunky")])
expect(res.get("status") == "done" and "chunky" in names(), "and imports like a bundle sent whole (%s)" % (res.get("error") or r))
asset_stage.STAGED.clear()
r = chunk(7, cblob[7:20])
expect(r.get("ok") is False and "send offset 0" in r.get("error", ""), "a chunk with no bundle begun: %s" % r.get("error"))
chunk(0, cblob[:10])
r = chunk(12, cblob[12:20])
expect(r.get("ok") is False and "10 bytes arrived" in r.get("error", ""), "a gap between chunks: %s" % r.get("error"))
r = chunk(10, cblob[10:20])
expect(r.get("ok") is False and "send offset 0" in r.get("error", ""), "and the bundle was dropped: %s" % r.get("error"))
chunk(0, cblob[:10])
r = chunk(10, cblob[10:20], key_=dict(ckey, id="other"))
expect(r.get("ok") is False and "no such bundle" in r.get("error", ""), "a chunk of another asset: %s" % r.get("error"))
chunk(0, cblob[:10])
r = chunk(10, cblob[10:] + b"xx")
expect(r.get("ok") is False and "runs past" in r.get("error", ""), "a chunk running past the total: %s" % r.get("error"))
r = chunk(0, cblob[:10], total_=total + 5)
expect(r.get("ok") is False and "add up" in r.get("error", ""), "a total the files do not add up to: %s" % r.get("error"))
lying = [dict(cspec[0]), dict(cspec[1], sha256="0" * 64), dict(cspec[2])]
chunk(0, cblob[:10], files=lying)
r = chunk(10, cblob[10:], files=lying)
expect(r.get("ok") is False and "sha256" in r.get("error", "") and not asset_stage.STAGED.bundles,
       "a lying sha256 is found when the last chunk lands, nothing kept: %s" % r.get("error"))
r = chunk(0, cblob[:10], total_=(1 << 30) + 1)
expect(r.get("ok") is False and "total" in r.get("error", ""), "a total over 1 GiB: %s" % r.get("error"))
chunk(0, cblob[:10])
chunk(0, cblob[:5])
r = chunk(5, cblob[5:])
expect(r.get("ok") and r["result"]["staged"], "a new offset 0 starts the bundle over")


# ---- over the real link: the request's blob reaches asset_stage
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "txn"))
from link_client import serve as s_serve      # noqa: E402


def serve(script):
    return s_serve(script, PALETTE_BOUNDS)


def link_script(c, out):
    spec_, blob_ = bundle(folder("glb"))
    c.send({"id": 10, "cmd": "asset_stage", "args": {"key": {"source": "hyper3d", "id": "j-1", "type": "model",
                                                             "format": "glb"}, "main": "cube.glb", "files": spec_}}, blob_)
    out["stage"] = c.recv()
    c.send({"id": 11, "cmd": "run_plan", "args": {"plan_id": "l1", "steps": [
        step({"source": "hyper3d", "id": "j-1", "type": "model"}, name="robot")]}})
    while True:
        m = c.recv()
        if "ok" in m:
            out["plan"] = m
            break


out = serve(link_script)
expect("error" not in out, "over the link: no client error (%s)" % out.get("error"))
expect((out.get("stage") or {}).get("result", {}).get("staged") is True, "asset_stage over the link: %s" % out.get("stage"))
expect(((out.get("plan") or {}).get("result") or {}).get("status") == "done" and "robot" in names(),
       "and the plan imports it (hyper3d's format defaults to glb): %s" % out.get("plan"))

shutil.rmtree(FIX, ignore_errors=True)
shutil.rmtree(TEST_TMP, ignore_errors=True)
print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
