"""render — pictures and files of the live scene, returned as bytes in the reply blob (no
shared temp file: the client may be on another machine): render_preview (Workbench, works
headless), viewport_screenshot (what the user sees; GUI only), save_blend."""
import math
import os
import shutil
import tempfile

import bpy
from mathutils import Vector

from .args import CommandError, s_int_arg
from .capture import CAPTURE
from .log import log


class s_Settings:
    """Set attributes, remembering the first old value, and put them all back."""

    def __init__(self):
        self.saved = []

    def set(self, owner, attr, value):
        self.saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, value)

    def restore(self):
        for owner, attr, value in reversed(self.saved):
            try:
                setattr(owner, attr, value)
            except Exception as e:      # keep restoring the rest
                log("could not restore %s: %s" % (attr, e))


def s_add_framing_camera(scene, width, height):
    bpy.context.view_layer.update()
    pts = [o.matrix_world @ Vector(c) for o in scene.objects
           if o.type == "MESH" and o.visible_get() for c in o.bound_box]
    if pts:
        lo = Vector(min(p[i] for p in pts) for i in range(3))
        hi = Vector(max(p[i] for p in pts) for i in range(3))
        center, radius = (lo + hi) / 2, max((hi - lo).length / 2, 0.01)
    else:
        center, radius = Vector((0, 0, 0)), 1.0
    data = bpy.data.cameras.new("blendmq_preview_cam")
    cam = bpy.data.objects.new("blendmq_preview_cam", data)
    scene.collection.objects.link(cam)
    # data.angle spans the longer image side (sensor_fit AUTO); fit the bounding sphere in
    # the shorter one.
    half = math.atan(math.tan(data.angle / 2) * min(width, height) / max(width, height))
    dist = radius / math.sin(half) * 1.05
    direction = Vector((1.0, -1.3, 0.8)).normalized()
    cam.location = center + direction * dist
    cam.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    data.clip_start = max(0.001, (dist - radius) * 0.5)
    data.clip_end = dist + radius * 2 + 1
    return cam


def cmd_render_preview(args):
    width = s_int_arg(args, "width", 640, 16, 1920)
    height = s_int_arg(args, "height", 480, 16, 1080)
    scene = bpy.context.scene
    r, shading = scene.render, scene.display.shading
    st = s_Settings()
    tmp = tempfile.mkdtemp(prefix="blendmq-render-")
    cam = None
    try:
        for owner, attr, value in (
                # no compositor, no sequencer: a File Output node must not write on the host (issue 23)
                (r, "use_compositing", False), (r, "use_sequencer", False),
                (r, "engine", "BLENDER_WORKBENCH"), (r, "resolution_x", width),
                (r, "resolution_y", height), (r, "resolution_percentage", 100),
                (r, "use_file_extension", True), (r, "film_transparent", False),
                (r, "filepath", os.path.join(tmp, "preview")),
                (r.image_settings, "file_format", "PNG"), (r.image_settings, "color_mode", "RGB"),
                (r.image_settings, "color_depth", "8"), (r.image_settings, "compression", 15),
                (scene.display, "render_aa", "FXAA"),   # 8x AA costs ~2.5x the time for a preview
                (shading, "light", "STUDIO"), (shading, "color_type", "MATERIAL"),
                (scene.view_settings, "view_transform", "Standard"),
                (scene.view_settings, "look", "None")):
            st.set(owner, attr, value)
        if scene.camera is None:
            cam = s_add_framing_camera(scene, width, height)
            st.set(scene, "camera", cam)
        with CAPTURE:
            bpy.ops.render.render(write_still=True)
        path = os.path.join(tmp, "preview.png")
        if not os.path.exists(path):
            raise CommandError("render produced no image: %s" % CAPTURE.text[-500:])
        with open(path, "rb") as f:
            png = f.read()
    finally:
        st.restore()
        if cam is not None:
            data = cam.data
            bpy.data.objects.remove(cam, do_unlink=True)
            bpy.data.cameras.remove(data)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"width": width, "height": height, "bytes": len(png)}, png


FAKE_USERS_MAX = 20000      # orphans listed in a keep_orphans reply (the reply JSON stays under 1 MiB)
COPY_PREFIX = "sandbox-copy-"   # the sandbox's copy of a scene too big for the link, by path (issue 23)


def s_link_folder():
    """The folder of the link's unix socket (`--socket PATH` after `--`): a headless Blender that
    `up` confines sees it, and so does its executor on this host."""
    import sys
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    if "--socket" in argv[:-1]:
        folder = os.path.dirname(argv[argv.index("--socket") + 1])
        if folder and os.path.isdir(folder) and os.access(folder, os.W_OK):
            return folder
    return None


def s_copy_by_path(path):
    """Move the sandbox's copy at `path` into the state folder (else the link socket's folder, else
    the snapshots' temp folder),
    where the executor on this host reads (and removes) it: a scene larger than the link's blob
    limit must not stop scripts."""
    import secrets
    from . import durable
    from .protocol import MAX_BLOB
    folder = durable.DURABLE.state_dir or s_link_folder() or durable.s_tmp_dir()
    if not folder:
        raise CommandError("the scene is %d bytes, over the link's %d byte limit, and this Blender has no folder "
                           "to hand the sandbox its copy by path" % (os.path.getsize(path), MAX_BLOB))
    for name in os.listdir(folder):             # copies an executor never took: at most one kept
        if name.startswith(COPY_PREFIX):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
    dest = os.path.join(folder, "%s%s.blend" % (COPY_PREFIX, secrets.token_hex(16)))
    shutil.move(path, dest)
    return dest


def cmd_save_blend(args):
    tmp = tempfile.mkdtemp(prefix="blendmq-save-")
    fake_users = None
    try:
        path = os.path.join(tmp, "scene.blend")
        if args.get("keep_orphans"):
            # the sandbox's copy (issue 23): state.save keeps data with no users (a fake user in
            # the file, listed in fake_users for the sandbox to take away again)
            from . import state
            with CAPTURE:
                side = state.save(path)
            fake_users = side["fake_users"]
            if len(fake_users) > FAKE_USERS_MAX:
                raise CommandError("save failed: %d data blocks with no users (at most %d)"
                                   % (len(fake_users), FAKE_USERS_MAX))
        else:
            with CAPTURE:
                result = bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, compress=False)
            if result != {"FINISHED"}:
                raise CommandError("save failed: %s" % CAPTURE.text[-500:])
        if not os.path.exists(path):
            raise CommandError("save failed: %s" % CAPTURE.text[-500:])
        from .protocol import MAX_BLOB
        if fake_users is not None and os.path.getsize(path) > MAX_BLOB:
            copy_path = s_copy_by_path(path)
            return {"bytes": os.path.getsize(copy_path), "filepath": bpy.data.filepath, "fake_users": fake_users,
                    "copy_path": copy_path}, b""
        with open(path, "rb") as f:
            data = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # filepath: the live scene's own path ("" when never saved; copy=True leaves it as it was):
    # the sandbox runs its copy at that same path, so scripts see the same bpy.data.filepath.
    out = {"bytes": len(data), "filepath": bpy.data.filepath}
    if fake_users is not None:
        out["fake_users"] = fake_users
    return out, data


# ---------------------------------------------------------------------------- viewport screenshot

SHOT_AREAS = ("VIEW_3D", "WINDOW")


def s_largest_view3d():
    """(window, area, region) of the largest 3D viewport in any window, or None."""
    best = None
    for win in bpy.context.window_manager.windows:
        for area in win.screen.areas:
            if area.type != "VIEW_3D":
                continue
            region = next((r for r in area.regions if r.type == "WINDOW"), None)
            if region is not None and (best is None or area.width * area.height > best[1].width * best[1].height):
                best = (win, area, region)
    return best


def s_png_bounded(path, max_size, tmp):
    """Re-encode a screenshot as PNG (the operator writes the scene's output format), scaled
    down so the longer side is at most max_size. Returns (width, height, bytes)."""
    img = bpy.data.images.load(path, check_existing=False)
    try:
        w, h = img.size
        if w <= 0 or h <= 0:
            raise CommandError("screenshot produced an empty image")
        if max(w, h) > max_size:
            f = max_size / max(w, h)
            w, h = max(1, round(w * f)), max(1, round(h * f))
            img.scale(w, h)
        out = os.path.join(tmp, "bounded.png")
        img.filepath_raw = out
        img.file_format = "PNG"
        img.save()
        with open(out, "rb") as f:
            return w, h, f.read()
    finally:
        bpy.data.images.remove(img)


def cmd_viewport_screenshot(args):
    """The largest 3D viewport as the user sees it (its header, toolbar and sidebar included),
    or with area WINDOW the whole Blender window; PNG bytes, the longer side at most max_size
    (default 1024) pixels."""
    max_size = s_int_arg(args, "max_size", 1024, 64, 2048)
    what = args.get("area", "VIEW_3D")
    if what not in SHOT_AREAS:
        raise CommandError("viewport_screenshot: area must be one of %s" % ", ".join(SHOT_AREAS))
    if bpy.app.background:
        raise CommandError("viewport_screenshot needs Blender with a window; headless, use render_preview")
    found = s_largest_view3d()
    if found is None:
        raise CommandError("viewport_screenshot: no 3D viewport is open")
    win, area, region = found
    tmp = tempfile.mkdtemp(prefix="blendmq-shot-")
    try:
        path = os.path.join(tmp, "shot.png")
        with bpy.context.temp_override(window=win):
            # draw now: the screenshot reads the window's last frame (in an override of its
            # own: in the area's, the screenshot that follows comes out 1x1 on 3.4.1, measured)
            bpy.ops.wm.redraw_timer(type="DRAW_WIN_SWAP", iterations=1)
        with bpy.context.temp_override(window=win, area=area, region=region):
            with CAPTURE:
                if what == "WINDOW":
                    result = bpy.ops.screen.screenshot(filepath=path)
                else:
                    result = bpy.ops.screen.screenshot_area(filepath=path)
        if result != {"FINISHED"} or not os.path.exists(path):
            raise CommandError("screenshot failed: %s" % CAPTURE.text[-500:])
        width, height, png = s_png_bounded(path, max_size, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"width": width, "height": height, "bytes": len(png), "area": what}, png
