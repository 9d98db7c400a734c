"""Every link command once, on one Blender (issue 30), inside a real headless Blender:

  BLENDER -b --factory-startup --python-exit-code 1 --python check_commands.py -- ADDON_DIR PALETTE_YAML VERSION

run by run_commands.sh VERSION (txn.commands_3.4, txn.commands_4.3, txn.commands_5.2). A
Blender-facing add-on file that uses an API this Blender lacks, without a check, fails here:

  * the Blender is the one asked for (bpy.app.version_string starts with VERSION);
  * every module of the add-on imports;
  * each command declared in proto/blender_link.json (link_proto.COMMANDS) is called once, with
    arguments that make it do its work (a cube, a plan committed and one rolled back, a script,
    a staged OBJ imported by a plan step, a render, look, a save...), and answers ok and what it
    was asked, except viewport_screenshot, which headless answers that it needs
    a window; an unexpected Python exception inside a command (AttributeError, TypeError, ...
    which handle_request turns into "Name: text") always fails;
  * a command the declaration has and this file does not call fails too (a new command gets
    its case here).
Exit 0 when every expectation holds, 1 otherwise (each failure printed).
"""
import hashlib
import importlib
import os
import re
import sys
import tempfile
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, PALETTE, VERSION = argv[0], argv[1], argv[2]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)
TEST_TMP = tempfile.mkdtemp(prefix="bmq-commands-")
tempfile.tempdir = TEST_TMP         # the add-on's private folders (staged assets, saves) land here

import bpy                                              # noqa: E402
from blendmq import bounds, link_proto                  # noqa: E402
from blendmq.commands import handle_request, s_Flags    # noqa: E402

FAILURES = []
CALLED = set()
# "TypeName: text": handle_request's answer to an exception no command meant to raise
UNEXPECTED = re.compile(r"^[A-Z][A-Za-z0-9_]*(Error|Exception|Warning)\b: ")


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILURES.append(what)


def call(cmd, args, blob=b"", ok=True, refusal=None):
    """One request through the add-on's dispatch; checks the answer and returns the result."""
    CALLED.add(cmd)
    reply, out_blob = handle_request({"id": 7, "cmd": cmd, "args": args}, time.monotonic(), blob=blob)
    err = reply.get("error") or ""
    expect(not UNEXPECTED.match(err), "%s: no unexpected exception (%s)" % (cmd, err[:300]))
    if refusal is not None:
        expect(not reply.get("ok") and refusal in err, "%s refuses: %s" % (cmd, err[:200]))
        return None, b""
    expect(bool(reply.get("ok")) == ok, "%s answers ok=%s %s" % (cmd, ok, ("(%s)" % err[:300]) if err else ""))
    result = reply.get("result")
    if reply.get("ok") and isinstance(result, dict) and cmd in link_proto.COMMANDS:
        # the declaration names every field a reply carries: the executor and its tests read it
        extra = sorted(set(result) - set(link_proto.COMMANDS[cmd]["reply"]))
        expect(not extra, "%s answers only the fields proto/blender_link.json declares (undeclared: %s)" % (cmd, extra))
    return (reply.get("result") if isinstance(reply.get("result"), dict) else {}), out_blob


def cube(name, x=0.0):
    return {"operation": "bpy.ops.mesh.primitive_cube_add", "name": name, "params": {"size": 1.0, "location": [x, 0, 0]}}


def sha(data):
    return hashlib.sha256(data).hexdigest()


print("Blender %s, Python %s" % (bpy.app.version_string, sys.version.split()[0]))
expect(bpy.app.version_string.startswith(VERSION + "."), "this is Blender %s (%s)" % (VERSION, bpy.app.version_string))
for f in sorted(os.listdir(os.path.join(ADDON_DIR, "blendmq"))):
    if f.endswith(".py") and f != "__init__.py":
        try:
            importlib.import_module("blendmq." + f[:-3])
            ok, why = True, ""
        except Exception as e:          # noqa: BLE001 (the point: any error)
            ok, why = False, "%s: %s" % (type(e).__name__, e)
        expect(ok, "blendmq.%s imports %s" % (f[:-3], why))
expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads")
# asset.import as an executor sends it at hello, with every format the add-on imports (palette.yaml
# lists only those its sources serve today; OBJ goes through each Blender's own OBJ importer)
AB = dict(bounds.s_Palette.bounds.get("asset.import") or {})
AB["format"] = {"type": "enum", "items": ["gltf", "glb", "fbx", "obj", "hdr", "exr", "jpg", "png"]}
bounds.s_Palette.bounds = dict(bounds.s_Palette.bounds, **{"asset.import": AB})

# ---- the scene, read and reset
res, _ = call("ping", {})
expect(res.get("pong") is True or "pong" in res, "ping: pong")
call("reset_scene", {})
res, _ = call("run_step", {"step": cube("box")})
expect("box" in bpy.data.objects, "run_step made the cube")
res, _ = call("object_info", {"name": "box"})
expect(res.get("type") == "MESH" and res.get("vertices") == 8, "object_info: a mesh of 8 vertices (%s)" % res)
res, _ = call("scene_info", {"limit": 10})
expect(res.get("count", 0) >= 1, "scene_info counts the cube")
res, _ = call("scene_names", {})
expect("box" in (res.get("names") or []), "scene_names has the cube")
res, _ = call("fingerprint", {"full": True})
expect(isinstance(res.get("digest"), str) and res.get("count", 0) >= 1, "fingerprint: a digest")
res, _ = call("rna_info", {"operation": "bpy.ops.mesh.primitive_cube_add"})
expect(res.get("blender") == bpy.app.version_string.split()[0] and res.get("params"), "rna_info: this Blender's RNA")
res, _ = call("bench_direct", {"count": 2})
expect(res.get("count") == 2, "bench_direct ran twice")

# ---- transactions: one committed, one rolled back, a plan, a cancel, an ack
call("reset_scene", {})
call("plan_begin", {"plan_id": "keep", "steps": 1})
call("run_step", {"plan_id": "keep", "step": cube("kept")})
call("plan_commit", {"plan_id": "keep"})
call("plan_begin", {"plan_id": "drop", "steps": 1})
call("run_step", {"plan_id": "drop", "step": cube("dropped", 2.0)})
res, _ = call("plan_rollback", {"plan_id": "drop"})
expect("kept" in bpy.data.objects and "dropped" not in bpy.data.objects, "commit kept its cube, rollback removed its own")
res, _ = call("run_plan", {"plan_id": "plan", "steps": [
    cube("a", 4.0), {"operation": "bpy.ops.object.shade_smooth", "target": "a", "params": {}},
    {"operation": "object.location", "target": "a", "params": {"value": [4, 1, 0]}}]})
expect(res.get("status") == "done" and res.get("steps_done") == 3, "run_plan: 3 steps done (%s)" % str(res)[:300])
res, _ = call("run_plan", {"plan_id": "bad", "steps": [
    cube("b", 6.0), {"operation": "object.location", "target": "nobody", "params": {"value": [0, 0, 0]}}]})
expect(res.get("status") == "failed" and "b" not in bpy.data.objects, "a failing run_plan rolls back")
res, _ = call("cancel_plan", {"plan_id": "plan"})
expect(res.get("running") is False, "cancel_plan: nothing running")
call("interrupted_ack", {"ids": []})

# ---- a script, live (its own transaction)
script = "import bpy\nbpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, location=(0, 3, 0))\nprint('made')\n"
res, _ = call("run_script", {"script": script, "sha256": sha(script.encode()), "plan_id": "script"})
expect(len(res.get("objects_created") or []) == 1 and "made" in (res.get("output") or ""),
       "run_script made one object (%s)" % str(res)[:300])

# ---- an asset: an OBJ staged, then imported by a plan step (each Blender has its own importer)
obj = b"o tri\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
key = {"source": "polyhaven", "id": "tri", "type": "model", "resolution": "1k", "format": "obj"}
res, _ = call("asset_stage", {"key": key, "main": "tri.obj",
                              "files": [{"path": "tri.obj", "size": len(obj), "sha256": sha(obj)}]}, blob=obj)
expect(res.get("staged") is True or bool(res.get("staged")), "asset_stage kept the OBJ (%s)" % str(res)[:200])
res, _ = call("run_plan", {"plan_id": "asset", "steps": [
    {"operation": "asset.import", "name": "tri", "params": key}]})
expect(res.get("status") == "done", "asset.import of the staged OBJ: %s" % str(res)[:400])

# ---- pictures and files
res, png = call("render_preview", {"width": 64, "height": 48})
expect(png[:8] == b"\x89PNG\r\n\x1a\n" and res.get("width") == 64, "render_preview: a 64 px PNG")
res, sheet = call("look", {"angles": 2, "width": 96, "height": 72})
expect(len(sheet) > 0 and len(res.get("angles") or ()) == 2, "look: a sheet of 2 views (%s)" % str(res)[:200])
res, blend = call("save_blend", {})
expect((len(blend) > 0 and blend[:7] == b"BLENDER") or bool(res.get("copy_path")), "save_blend: a .blend")
call("viewport_screenshot", {}, refusal="needs Blender with a window")

# ---- last: shutdown only raises the server loop's flag
call("shutdown", {})
expect(s_Flags.shutdown is True, "shutdown asks the server loop to stop")
s_Flags.shutdown = False

missing = sorted(set(link_proto.COMMANDS) - CALLED)
expect(not missing, "every declared command was called once %s" % (missing or ""))
if FAILURES:
    print("%d failure(s) on Blender %s" % (len(FAILURES), bpy.app.version_string))
    sys.exit(1)
print("all ok: %d commands on Blender %s" % (len(CALLED), bpy.app.version_string))
