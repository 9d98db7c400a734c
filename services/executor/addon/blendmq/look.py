"""look — a second pair of eyes on the scene (issue 16): pictures from several sides and the
topology numbers, so whoever built it (a person or a model) can check the work.

cmd_look(args) → (reply, PNG bytes). args: angles 1..8 (default 4), width and height of each
view (clamped to 64..1024, default 320x240). The views are Workbench renders from one
temporary camera framing the bounding box of every visible object with geometry: front
(orthographic, from -Y), right (orthographic, from +X), top (orthographic, from +Z), then
perspective views around the scene (the first one from the same side as render_preview, the
others spread evenly around Z). They are composed row by row, 2 columns, into one contact
sheet (Blender images: foreach_get/foreach_set with numpy), first view top left.

Topology per object is read from its evaluated mesh (modifiers applied, ob.evaluated_get +
to_mesh) with numpy over the mesh's arrays, with bmesh's meaning: a non-manifold edge is an
edge whose number of linked faces is not 2 (wire edges, with none, included); loose parts are
the connected components of vertices and edges (a lone vertex is one). Objects without
geometry (empties, lights, cameras) report null for these. At most OBJECTS_MAX objects are
listed (sorted by name; count says how many there are); totals cover them all.

Contract: the scene is as before: the camera, its data, every image the renders and the sheet
made, and every evaluated mesh are removed; the render settings and scene.camera are put back;
no object is added, removed or renamed for good (the command is keeps_names)."""
import math
import os
import shutil
import tempfile

import bpy
import numpy as np
from mathutils import Euler, Vector

from .args import CommandError, s_int_arg
from .capture import CAPTURE
from .log import log
from .render import s_Settings

OBJECTS_MAX = 500
ANGLES_DEFAULT, ANGLES_MAX = 4, 8
SIZE_MIN, SIZE_MAX = 64, 1024
GEOMETRY = ("MESH", "CURVE", "SURFACE", "META", "FONT")
BACKGROUND = (0.12, 0.12, 0.12, 1.0)     # an empty cell of the sheet (odd angles)
PERSPECTIVE = Vector((1.0, -1.3, 0.8))   # render_preview's side


def s_round(v):
    return [round(float(x), 6) for x in v]


# ---------------------------------------------------------------------------- topology

def s_loose_parts(nv, edges):
    """Connected components of nv vertices joined by edges (flat array a0 b0 a1 b1 ...): roots
    hooked to the smaller root across each edge, then pointer jumping, until every edge joins
    one label (the roots about halve each round)."""
    labels = np.arange(nv, dtype=np.int64)
    a, b = edges[0::2], edges[1::2]
    while len(a):
        la, lb = labels[a], labels[b]
        if np.array_equal(la, lb):
            break
        m = np.minimum(la, lb)
        np.minimum.at(labels, la, m)
        np.minimum.at(labels, lb, m)
        while True:
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped
    return int(len(np.unique(labels))) if nv else 0


def s_mesh_stats(me, matrix):
    """(vertices, faces, non-manifold edges, loose parts, (lo, hi) world bounds or None)."""
    nv, ne, nf, nl = len(me.vertices), len(me.edges), len(me.polygons), len(me.loops)
    edges = np.empty(ne * 2, dtype=np.int64)
    me.edges.foreach_get("vertices", edges)
    loop_edges = np.empty(nl, dtype=np.int64)
    me.loops.foreach_get("edge_index", loop_edges)
    faces_per_edge = np.bincount(loop_edges, minlength=ne) if nl else np.zeros(ne, dtype=np.int64)
    non_manifold = int(np.count_nonzero(faces_per_edge[:ne] != 2))
    bounds = None
    if nv:
        co = np.empty(nv * 3, dtype=np.float64)
        me.vertices.foreach_get("co", co)
        m = np.array(matrix, dtype=np.float64)
        world = co.reshape(nv, 3) @ m[:3, :3].T + m[:3, 3]
        bounds = (world.min(axis=0), world.max(axis=0))
    return nv, nf, non_manifold, s_loose_parts(nv, edges), bounds


def s_object_stats(o, depsgraph):
    """One object's entry, and its world bounds (None without geometry)."""
    entry = {"name": o.name, "type": o.type, "vertices": None, "faces": None, "bounds": None,
             "non_manifold_edges": None, "loose_parts": None}
    if o.type not in GEOMETRY:
        return entry, None
    ev = o.evaluated_get(depsgraph)
    try:
        me = ev.to_mesh()
    except RuntimeError as e:       # e.g. a metaball whose mesh lives on its basis object
        log("look: no mesh for %s: %s" % (o.name, e))
        return entry, None
    try:
        if me is None:
            return entry, None
        nv, nf, nm, parts, bounds = s_mesh_stats(me, ev.matrix_world)
    finally:
        ev.to_mesh_clear()
    entry.update(vertices=nv, faces=nf, non_manifold_edges=nm, loose_parts=parts)
    if bounds is not None:
        entry["bounds"] = {"min": s_round(bounds[0]), "max": s_round(bounds[1])}
    return entry, bounds


def s_topology(scene):
    """(objects listed, count, totals, framing box (lo, hi) of the visible geometry or None)."""
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    objects = sorted(scene.objects, key=lambda o: o.name)
    listed = []
    totals = {"objects": len(objects), "with_geometry": 0, "vertices": 0, "faces": 0,
              "non_manifold_edges": 0, "loose_parts": 0, "bounds": None}
    lo = hi = None
    vlo = vhi = None
    for o in objects:
        entry, bounds = s_object_stats(o, depsgraph)
        if len(listed) < OBJECTS_MAX:
            listed.append(entry)
        if entry["vertices"] is None:
            continue
        totals["with_geometry"] += 1
        for key in ("vertices", "faces", "non_manifold_edges", "loose_parts"):
            totals[key] += entry[key]
        if bounds is None:
            continue
        lo = bounds[0] if lo is None else np.minimum(lo, bounds[0])
        hi = bounds[1] if hi is None else np.maximum(hi, bounds[1])
        if o.visible_get():
            vlo = bounds[0] if vlo is None else np.minimum(vlo, bounds[0])
            vhi = bounds[1] if vhi is None else np.maximum(vhi, bounds[1])
    if lo is not None:
        totals["bounds"] = {"min": s_round(lo), "max": s_round(hi)}
    return listed, len(objects), totals, (None if vlo is None else (Vector(vlo), Vector(vhi)))


# ---------------------------------------------------------------------------- views

def s_views(angles):
    """[(name, kind, direction from the centre to the camera)] for `angles` views."""
    views = [("front", "ORTHO", Vector((0, -1, 0))), ("right", "ORTHO", Vector((1, 0, 0))),
             ("top", "ORTHO", Vector((0, 0, 1)))][:angles]
    extra = angles - len(views)
    for i in range(extra):
        d = PERSPECTIVE.copy()
        d.rotate(Euler((0.0, 0.0, 2 * math.pi * i / extra)))
        views.append(("perspective" if i == 0 else "perspective_%d" % (i + 1), "PERSP", d.normalized()))
    return views


# What each orthographic view sees across (image x) and up (image y), and its rotation.
ORTHO_AXES = {"front": (0, 2, (math.pi / 2, 0.0, 0.0)),
              "right": (1, 2, (math.pi / 2, 0.0, math.pi / 2)),
              "top": (0, 1, (0.0, 0.0, 0.0))}


def s_aim(cam, view, box, width, height):
    """Point the camera at the box for one view."""
    name, kind, direction = view
    lo, hi = box
    center, size = (lo + hi) / 2, hi - lo
    radius = max(size.length / 2, 0.01)
    data = cam.data
    data.type = kind
    if kind == "ORTHO":
        across, up, rotation = ORTHO_AXES[name]
        wide, tall = max(size[across], 0.01), max(size[up], 0.01)
        # ortho_scale spans the longer image side (sensor_fit AUTO)
        scale = max(wide, tall * width / height) if width >= height else max(wide * height / width, tall)
        data.ortho_scale = scale * 1.1
        dist = radius * 2 + 1
        cam.rotation_euler = rotation
    else:
        half = math.atan(math.tan(data.angle / 2) * min(width, height) / max(width, height))
        dist = radius / math.sin(half) * 1.05
        cam.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    cam.location = center + direction * dist
    data.clip_start = max(0.001, (dist - radius) * 0.5)
    data.clip_end = dist + radius * 2 + 1


def s_render_settings(st, scene, width, height, path):
    r, shading = scene.render, scene.display.shading
    for owner, attr, value in (
            (r, "use_compositing", False), (r, "use_sequencer", False),     # no File Output writes (issue 23)
            (r, "engine", "BLENDER_WORKBENCH"), (r, "resolution_x", width), (r, "resolution_y", height),
            (r, "resolution_percentage", 100), (r, "use_border", False), (r, "use_stamp", False),
            (r, "use_multiview", False), (r, "use_file_extension", True), (r, "film_transparent", False),
            (r, "filepath", path), (r.image_settings, "file_format", "PNG"),
            (r.image_settings, "color_mode", "RGB"), (r.image_settings, "color_depth", "8"),
            (r.image_settings, "compression", 15), (scene.display, "render_aa", "FXAA"),
            (shading, "light", "STUDIO"), (shading, "color_type", "MATERIAL"),
            (scene.view_settings, "view_transform", "Standard"), (scene.view_settings, "look", "None")):
        st.set(owner, attr, value)


def s_render_view(path, width, height):
    """Render the scene's camera to path; its pixels as a float array (height, width, 4)."""
    with CAPTURE:
        bpy.ops.render.render(write_still=True)
    if not os.path.exists(path):
        raise CommandError("look: the render produced no image: %s" % CAPTURE.text[-500:])
    img = bpy.data.images.load(path, check_existing=False)
    try:
        if tuple(img.size) != (width, height):
            raise CommandError("look: a view came out %dx%d, not %dx%d" % (img.size[0], img.size[1], width, height))
        px = np.empty(width * height * 4, dtype=np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    os.remove(path)
    return px.reshape(height, width, 4)


def s_sheet_png(cells, width, height, tmp):
    """The views composed row by row, 2 columns (first top left; Blender's rows go bottom up)."""
    cols = 1 if len(cells) == 1 else 2
    rows = (len(cells) + cols - 1) // cols
    sheet = np.empty((rows * height, cols * width, 4), dtype=np.float32)
    sheet[...] = BACKGROUND
    for i, px in enumerate(cells):
        y0, x0 = (rows - 1 - i // cols) * height, (i % cols) * width
        sheet[y0:y0 + height, x0:x0 + width] = px
    sheet[..., 3] = 1.0
    img = bpy.data.images.new("blendmq_look_sheet", cols * width, rows * height, alpha=False)
    try:
        img.pixels.foreach_set(sheet.ravel())
        out = os.path.join(tmp, "sheet.png")
        img.filepath_raw = out
        img.file_format = "PNG"
        img.save()
        with open(out, "rb") as f:
            return cols * width, rows * height, f.read()
    finally:
        bpy.data.images.remove(img)


def s_remove_new_images(before):
    """Remove the images the renders made (Render Result, Viewer Node) when they were not there."""
    for img in [i for i in bpy.data.images if i.as_pointer() not in before]:
        try:
            bpy.data.images.remove(img)
        except Exception as e:          # keep removing the rest
            log("look: could not remove image %s: %s" % (img.name, e))


def cmd_look(args):
    angles = s_int_arg(args, "angles", ANGLES_DEFAULT, 1, ANGLES_MAX)
    if args.get("angles") is not None and args["angles"] != angles:
        raise CommandError("look: angles must be 1..%d" % ANGLES_MAX)
    width = s_int_arg(args, "width", 320, SIZE_MIN, SIZE_MAX)
    height = s_int_arg(args, "height", 240, SIZE_MIN, SIZE_MAX)
    scene = bpy.context.scene
    listed, count, totals, box = s_topology(scene)
    if box is None:
        box = (Vector((-1, -1, -1)), Vector((1, 1, 1)))
    views = s_views(angles)
    images_before = {i.as_pointer() for i in bpy.data.images}
    st = s_Settings()
    tmp = tempfile.mkdtemp(prefix="blendmq-look-")
    cam = data = None
    try:
        path = os.path.join(tmp, "view")
        s_render_settings(st, scene, width, height, path)
        data = bpy.data.cameras.new("blendmq_look_cam")
        cam = bpy.data.objects.new("blendmq_look_cam", data)
        scene.collection.objects.link(cam)
        st.set(scene, "camera", cam)
        cells = []
        for view in views:
            s_aim(cam, view, box, width, height)
            cells.append(s_render_view(path + ".png", width, height))
        sheet_w, sheet_h, png = s_sheet_png(cells, width, height, tmp)
    finally:
        st.restore()
        if cam is not None:
            bpy.data.objects.remove(cam, do_unlink=True)
        if data is not None:
            bpy.data.cameras.remove(data)
        s_remove_new_images(images_before)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"angles": [v[0] for v in views], "width": width, "height": height,
            "sheet": {"width": sheet_w, "height": sheet_h}, "count": count, "objects": listed,
            "totals": totals, "bytes": len(png)}, png
