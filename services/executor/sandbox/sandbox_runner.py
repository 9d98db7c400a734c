"""blendmq sandbox runner: runs ONE validated BPY script in a disposable headless
Blender that bubblewrap isolates (services/executor/sandbox_*.c start it), and
reports what happened.

  bwrap ... blender -b --factory-startup --disable-autoexec --python /sandbox/runner.py

Protocol on fd 3 (a socket from the pool), one JSON line each way, declared in
proto/sandbox.json (/sandbox/link_proto.py, generated from it, is bound read-only next to this
file: the job is checked against its declared fields, and the line limits are its):
  runner → pool   {"ready": true, "blender": "3.4.1"}        once Blender is up (warm)
  pool → runner   {"nonce", "script": "/job/script.py", "sha256": hex of the script's bytes,
                   "blend": the scene copy to open | null (factory scene),
                   "scene_path": the live scene's path ("" : never saved), "timeout_ms",
                   "out": "/out", "preview": [w, h] | null, "modules": [...], "builtins": [...]}
  The scene copy is bound read-only at the live scene's path when it has one (blend ==
  scene_path): opened there, bpy.data.filepath is the same as live. When the live scene
  was never saved, blend is /job/scene.blend and it is read as the startup file, so that
  bpy.data.filepath is "" as live.
  runner → pool   the result (below), then the process exits: an instance runs one script.

Result: {"nonce", "ok", "verdict": "ok" | "error" | "rejected" | "timeout", "error": {"type", "message",
  "line"} | null, "traceback", "output" (the script's prints, tail), "duration_ms",
  "diff": {"added": [{"name", "type", "vertices"}], "removed": [...], "changed": [{"name",
  "fields"}]}, "violations": [{"check", "detail"}], "preview": {"width", "height"} | null,
  "blend_filepath": bpy.data.filepath as the script saw it,
  "before_fingerprint", "after_fingerprint": fingerprint.compute()'s digest of the scene before
  and after the script (the copy opened with its orphans: the same as live's before), and
  "fingerprint_diff": fingerprint.diff of the two (added, removed, changed with the properties)}

The script runs under the same run-time guard as live: /sandbox/script_exec.py (the add-on's
services/executor/addon/blendmq/script_exec.py, bound read-only): the bytes are decoded as
strict UTF-8, prepare() checks the text, the seal (sha256) and the bytecode and builds the
restricted globals (refused: verdict "rejected"), run() executes it under the wall-clock
limit (timed out: verdict "timeout"). Before and after it, the runner notes what a script must not leave behind:
app handlers, timers, drivers and the driver namespace, registered classes and RNA
properties, text blocks used as modules, preference changes, add-ons, Python threads,
processes, and files anywhere writable except the output folder. Anything new is a
violation and the verdict is "rejected".

What runs here is untrusted: this file trusts nothing the script leaves behind, and the
isolation (no network, read-only system, private home, rlimits, a wall-clock kill) is
bubblewrap's and the pool's job, not this file's. A script that escaped the static checks
could forge this report; it still could not leave the sandbox."""
import json
import math
import os
import socket
import sys
import threading
import time
import traceback

import bpy

sys.path.insert(0, "/sandbox")
import fingerprint                      # noqa: E402  (the scene's digest, the same as live's: issue 23)
import link_proto                       # noqa: E402  (the fd-3 protocol, generated from proto/sandbox.json)
import script_exec                      # noqa: E402  (the shared run-time guard)
import state                            # noqa: E402  (the live scene's copy with its orphans)
sys.path.pop(0)

CTRL = socket.socket(fileno=3)
WRITABLE = ("/tmp", os.environ.get("HOME", "/home/sb"), "/dev/shm")


def send(obj):
    CTRL.sendall((json.dumps(obj, separators=(",", ":"), default=str) + "\n").encode())


def read_line():
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = CTRL.recv(65536)
        if not chunk:
            os._exit(0)                 # the pool went away
        buf += chunk
        if len(buf) > link_proto.SANDBOX_JOB_MAX_LINE:
            os._exit(3)
    return json.loads(buf)


# ---------------------------------------------------------------------------- state

def s_drivers():
    count = 0
    colls = (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.scenes, bpy.data.worlds,
             bpy.data.lights, bpy.data.cameras, bpy.data.curves, bpy.data.node_groups,
             bpy.data.shape_keys, bpy.data.textures, bpy.data.collections, bpy.data.armatures)
    for coll in colls:
        for idb in coll:
            for owner in (idb, getattr(idb, "node_tree", None)):
                ad = getattr(owner, "animation_data", None) if owner is not None else None
                if ad is not None:
                    count += len(ad.drivers)
    return count


def s_prefs():
    prefs = bpy.context.preferences
    out = {}
    for section in ("filepaths", "system", "edit", "view", "inputs", "experimental"):
        owner = getattr(prefs, section, None)
        if owner is None:
            continue
        for prop in owner.bl_rna.properties:
            if prop.type in ("POINTER", "COLLECTION") or prop.identifier == "rna_type":
                continue
            try:
                value = getattr(owner, prop.identifier)
                out[section + "." + prop.identifier] = repr(value[:] if hasattr(value, "__len__")
                                                            and not isinstance(value, str) else value)
            except Exception:
                pass
    out["addons"] = repr(sorted(prefs.addons.keys()))
    return out


def s_files():
    seen = {}
    for root in WRITABLE:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in filenames + dirnames:
                path = os.path.join(dirpath, name)
                try:
                    st = os.lstat(path)
                    seen[path] = (st.st_size, st.st_mtime_ns)
                except OSError:
                    pass
    return seen


def s_procs():
    me = os.getpid()
    return {p for p in os.listdir("/proc") if p.isdigit() and int(p) != me}


RNA_TYPES = ("Object", "Scene", "Mesh", "Material", "World", "Collection", "WindowManager",
             "ViewLayer", "Light", "Camera", "Preferences")


def s_state():
    handlers = {}
    for name in dir(bpy.app.handlers):
        value = getattr(bpy.app.handlers, name)
        if not name.startswith("_") and isinstance(value, list):
            handlers[name] = [id(f) for f in value]
    return {
        "handlers": handlers,
        "driver_namespace": set(bpy.app.driver_namespace.keys()),
        "drivers": s_drivers(),
        "types": set(dir(bpy.types)),
        "props": {t: len(getattr(bpy.types, t).bl_rna.properties) for t in RNA_TYPES
                  if hasattr(bpy.types, t)},
        "texts": {t.name: bool(t.use_module) for t in bpy.data.texts},
        "prefs": s_prefs(),
        "threads": {t.ident for t in threading.enumerate()},
        "modules": set(sys.modules),
        "files": s_files(),
        "procs": s_procs(),
    }


def s_violations(before, after, timers):
    v = []

    def add(check, detail):
        v.append({"check": check, "detail": str(detail)[:300]})

    for name, fns in after["handlers"].items():
        new = [f for f in fns if f not in before["handlers"].get(name, [])]
        if new:
            add("handlers", "%d new handler(s) in bpy.app.handlers.%s" % (len(new), name))
    if timers:
        add("timers", "%d timer(s) still registered" % len(timers))
    if after["drivers"] > before["drivers"]:
        add("drivers", "%d new driver(s)" % (after["drivers"] - before["drivers"]))
    new_ns = after["driver_namespace"] - before["driver_namespace"]
    if new_ns:
        add("drivers", "new driver_namespace entries: %s" % sorted(new_ns)[:10])
    new_types = after["types"] - before["types"]
    if new_types:
        add("classes", "registered classes: %s" % sorted(new_types)[:10])
    for t, n in after["props"].items():
        if n != before["props"].get(t, n):
            add("classes", "bpy.types.%s gained %d propert(ies)" % (t, n - before["props"][t]))
    for name, module in after["texts"].items():
        if name not in before["texts"]:
            add("texts", "new text block %r" % name)
        elif module and not before["texts"][name]:
            add("texts", "text block %r made a module" % name)
    changed = [k for k in after["prefs"] if after["prefs"][k] != before["prefs"].get(k)]
    if changed:
        add("preferences", "changed: %s" % ", ".join(changed[:10]))
    new_threads = after["threads"] - before["threads"]
    if new_threads:
        add("threads", "%d Python thread(s) still running" % len(new_threads))
    new_procs = after["procs"] - before["procs"]
    if new_procs:
        add("processes", "%d process(es) started" % len(new_procs))
    files = [p for p, st in after["files"].items() if before["files"].get(p) != st]
    files += [p for p in before["files"] if p not in after["files"]]
    if files:
        add("files", "files written outside the output folder: %s" % ", ".join(sorted(files)[:10]))
    return v


# ---------------------------------------------------------------------------- scene diff

def s_round(seq):
    return [round(float(x), 5) for x in seq]


def s_objects():
    out = {}
    for o in bpy.data.objects:
        d = {"type": o.type, "data": o.data.name if o.data is not None else None,
             "location": s_round(o.location), "rotation": s_round(o.rotation_euler),
             "scale": s_round(o.scale), "parent": o.parent.name if o.parent else None,
             "materials": [s.material.name if s.material else None for s in o.material_slots],
             "modifiers": [(m.name, m.type) for m in o.modifiers],
             "hidden": bool(o.hide_viewport or o.hide_render)}
        if o.type == "MESH" and o.data is not None:
            d["vertices"] = len(o.data.vertices)
            d["faces"] = len(o.data.polygons)
        out[o.name] = d
    return out


def s_diff(before, after):
    added = [{"name": n, "type": after[n]["type"], "vertices": after[n].get("vertices", 0)}
             for n in sorted(after) if n not in before]
    removed = sorted(n for n in before if n not in after)
    changed = []
    for n in sorted(after):
        if n in before and after[n] != before[n]:
            changed.append({"name": n, "fields": sorted(k for k in after[n] if after[n][k] != before[n].get(k))})
    return {"added": added[:500], "removed": removed[:500], "changed": changed[:500],
            "objects": len(after)}


# ---------------------------------------------------------------------------- run

def s_preview(out, width, height):
    scene = bpy.context.scene
    r = scene.render
    r.engine = "BLENDER_WORKBENCH"
    r.use_compositing = r.use_sequencer = False      # as live renders (issue 23)
    r.resolution_x, r.resolution_y, r.resolution_percentage = width, height, 100
    r.filepath = os.path.join(out, "preview.png")
    r.image_settings.file_format = "PNG"
    scene.display.render_aa = "OFF"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "MATERIAL"
    if scene.camera is None:
        from mathutils import Vector
        objs = [o for o in scene.objects if o.type == "MESH"] or list(scene.objects)
        pts = [o.matrix_world @ Vector(c) for o in objs for c in o.bound_box] or [Vector((0, 0, 0))]
        lo = Vector((min(p.x for p in pts), min(p.y for p in pts), min(p.z for p in pts)))
        hi = Vector((max(p.x for p in pts), max(p.y for p in pts), max(p.z for p in pts)))
        center, radius = (lo + hi) / 2, max((hi - lo).length / 2, 0.5)
        data = bpy.data.cameras.new("sandbox_preview_cam")
        cam = bpy.data.objects.new("sandbox_preview_cam", data)
        scene.collection.objects.link(cam)
        direction = Vector((1.0, -1.3, 0.8)).normalized()
        cam.location = center + direction * (radius / math.sin(data.angle / 2) * 1.1)
        cam.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
        data.clip_end = (cam.location - center).length + radius * 2
        scene.camera = cam
    bpy.ops.render.render(write_still=True)
    return {"width": width, "height": height}


SIDECAR = "/job/scene.blend"             # its .json: the fake users the live save added (state.save)


AFTER_IDS_MAX = 64          # data blocks whose per-property digests go with the result


def s_touched_ids(fp, diff):
    """The after-state of what the script added or changed ({id: {digest, props}}): live compares
    its own with it when it diverges, to name the properties that differ."""
    keys = list(diff["added"]) + [c["id"] for c in diff["changed"]]
    return {k: fp["ids"][k] for k in keys[:AFTER_IDS_MAX] if k in fp["ids"]}


def s_open_scene(job):
    blend = job.get("blend")
    if not blend:
        return
    if job.get("scene_path"):
        # bound at the live path: the same bpy.data.filepath as live
        bpy.ops.wm.open_mainfile(filepath=blend, load_ui=False, use_scripts=False)
    else:
        # the live scene was never saved: read the copy as the startup file, filepath ""
        bpy.ops.wm.read_homefile(filepath=blend, load_ui=False)
    # the copy was written by state.save: data with no users live was saved with a fake user;
    # take it away again, as state.load does, so the copy's fingerprint is live's (issue 23)
    if os.path.exists(SIDECAR + ".json"):
        for ident, name in state.read_sidecar(SIDECAR)["fake_users"]:
            coll = getattr(bpy.data, ident, None) if not ident.startswith("_") else None
            block = coll.get(name) if coll is not None and hasattr(coll, "get") else None
            if block is not None and block.library is None:
                block.use_fake_user = False


def s_run(job):
    result = {"nonce": job.get("nonce"), "ok": False, "verdict": "error", "error": None,
              "traceback": None, "output": "", "duration_ms": 0.0, "diff": None,
              "violations": [], "preview": None}
    with open(job["script"], "rb") as f:
        raw = f.read()
    try:
        source = raw.decode("utf-8", "strict")
    except UnicodeDecodeError as exc:
        result["verdict"] = "rejected"
        result["error"] = {"type": "ScriptRefused", "line": None,
                           "message": "the script is not valid UTF-8 (%s at byte %d)" % (exc.reason, exc.start)}
        result["message"] = result["error"]["message"]
        return result
    try:
        code, glob = script_exec.prepare(source, job.get("sha256"), job["modules"], job["builtins"])
    except script_exec.ScriptRefused as exc:
        result["verdict"] = "rejected"
        result["error"] = {"type": "ScriptRefused", "message": str(exc)[:1000], "line": None}
        result["message"] = "refused by the run-time guard: %s" % str(exc)[:1000]
        return result
    s_open_scene(job)
    result["blend_filepath"] = bpy.data.filepath     # what the script sees: the live path, or ""
    timers = []
    real_register = bpy.app.timers.register

    def recording_register(fn, *args, **kwargs):
        timers.append(fn)
        return real_register(fn, *args, **kwargs)

    bpy.app.timers.register = recording_register
    objects_before = s_objects()
    script_exec.settle()
    fp_before = fingerprint.compute()
    result["before_fingerprint"] = fp_before["digest"]
    hazards = script_exec.hazards()
    shapes = script_exec.topology()
    before = s_state()
    try:
        ran = script_exec.run(code, glob, int(job.get("timeout_ms") or 30000))
    finally:
        bpy.app.timers.register = real_register
    if ran["failure"] is None:
        script_exec.canonical_after(shapes)         # as live does before its after-fingerprint
    hazards = script_exec.check_after(hazards)
    script_exec.settle()
    fp_after = fingerprint.compute()
    result["after_fingerprint"] = fp_after["digest"]
    result["fingerprint_diff"] = fingerprint.diff(fp_before, fp_after)
    result["after_ids"] = s_touched_ids(fp_after, result["fingerprint_diff"])
    failure = ran["failure"]
    result["duration_ms"] = ran["duration_ms"]
    result["output"] = ran["output"][-4000:]
    if failure is not None:
        result["traceback"], result["error"] = script_exec.format_error(failure, source)
    live_timers = [fn for fn in timers if bpy.app.timers.is_registered(fn)]
    after = s_state()
    result["violations"] = s_violations(before, after, live_timers)
    for h in hazards:             # what live would refuse at the change: the same here (issue 23)
        result["violations"].append({"check": "host_write" if h.startswith("host write") else "too_big",
                                     "detail": h[:300]})
    result["diff"] = s_diff(objects_before, s_objects())
    if ran["timed_out"]:
        result["verdict"] = "timeout"
    elif result["violations"]:
        result["verdict"] = "rejected"
    elif failure is None:
        result["verdict"], result["ok"] = "ok", True
    if result["ok"] and job.get("preview"):
        try:
            result["preview"] = s_preview(job["out"], int(job["preview"][0]), int(job["preview"][1]))
        except Exception as exc:
            result["preview_error"] = str(exc)[:300]
    return result


def s_refused(job, why):
    return {"nonce": job.get("nonce") if isinstance(job, dict) else None, "ok": False, "verdict": "error",
            "error": {"type": "runner", "message": why[:1000], "line": None}, "traceback": None,
            "violations": [], "diff": None}


def main():
    send({"ready": True, "blender": bpy.app.version_string.split(" ")[0]})
    job = read_line()
    wrong = link_proto.check_args(link_proto.SANDBOX_JOB, job, "sandbox job")
    try:
        result = s_refused(job, wrong) if wrong else s_run(job)
    except BaseException as exc:
        result = {"nonce": job.get("nonce"), "ok": False, "verdict": "error",
                  "error": {"type": "runner", "message": "%s: %s" % (type(exc).__name__, exc), "line": None},
                  "traceback": traceback.format_exc()[-4000:], "violations": [], "diff": None}
    send({k: v for k, v in result.items() if k in link_proto.SANDBOX_RESULT_FIELDS})
    CTRL.close()
    os._exit(0)


main()
