"""look (issue 16, "a second pair of eyes") inside a real headless Blender:

  blender -b --factory-startup --python check_look.py -- ADDON_DIR

  * topology of known primitives on the evaluated mesh: a cube has 8 vertices, 6 faces, no
    non-manifold edge, 1 loose part; a plane's 4 boundary edges are non-manifold; two cubes
    joined into one object are 2 loose parts; a lone vertex and a wire edge count; a modifier
    (array) is applied before counting; world bounds follow the object's transform;
  * the contact sheet is a PNG of 2 columns of width x height views (1 column for one view),
    and its pixels show the scene (not one flat colour);
  * arguments: angles out of 1..8 refused, sizes clamped to 64..1024;
  * the scene is as before: the same objects, cameras, images, meshes and scene camera, and the
    render settings as they were; the scene revision does not move (keeps_names);
  * at most 500 objects are listed, count says how many there are, totals cover them all.

Exit 0 when every expectation holds, 1 otherwise (each failure printed)."""
import struct
import sys
import time
import zlib

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR = argv[0]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)

import bpy                                              # noqa: E402
from blendmq.commands import handle_request             # noqa: E402
from blendmq.look import s_loose_parts                  # noqa: E402
from blendmq.scene import REVISION, cmd_reset_scene     # noqa: E402
import numpy as np                                      # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILURES.append(what)


def look(**args):
    reply, blob = handle_request({"id": 3, "cmd": "look", "args": args}, time.monotonic())
    return reply, blob


def png_size(blob):
    if blob[:8] != b"\x89PNG\r\n\x1a\n" or blob[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", blob[16:24])


def png_rows(blob):
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Blender writes) to rows of bytes."""
    w, h = png_size(blob)
    depth, ctype = blob[24], blob[25]
    assert depth == 8 and ctype in (2, 6), (depth, ctype)
    bpp = 3 if ctype == 2 else 4
    pos, data = 8, b""
    while pos < len(blob):
        n, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        if kind == b"IDAT":
            data += blob[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(data), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(h, w, bpp)


def state():
    """What look must leave as it was."""
    r = bpy.context.scene.render
    return {"objects": sorted(o.name for o in bpy.data.objects),
            "cameras": sorted(c.name for c in bpy.data.cameras),
            "images": sorted(i.name for i in bpy.data.images),
            "meshes": sorted(m.name for m in bpy.data.meshes),
            "scene_camera": bpy.context.scene.camera.name if bpy.context.scene.camera else None,
            "render": (r.engine, r.resolution_x, r.resolution_y, r.filepath, r.image_settings.file_format)}


def add(op, name, location=(0, 0, 0), **kw):
    op(location=location, **kw)
    o = bpy.context.view_layer.objects.active
    o.name = name
    return o


def by_name(reply):
    return {o["name"]: o for o in reply["result"]["objects"]}


# ---- loose parts on their own: components of plain graphs
expect(s_loose_parts(0, np.empty(0, np.int64)) == 0, "no vertices: no part")
expect(s_loose_parts(3, np.empty(0, np.int64)) == 3, "three lone vertices: three parts")
expect(s_loose_parts(6, np.array([5, 4, 4, 3, 0, 1], np.int64)) == 3, "a path 5-4-3, an edge 0-1, a lone 2: three parts")
chain = np.array([x for i in range(999) for x in (i + 1, i)], np.int64)
expect(s_loose_parts(1000, chain) == 1, "a chain of 1000 vertices given backwards: one part")

# ---- known primitives
cmd_reset_scene({})
add(bpy.ops.mesh.primitive_cube_add, "cube", (0, 0, 0), size=2)
add(bpy.ops.mesh.primitive_plane_add, "plane", (4, 0, 0), size=2)
a = add(bpy.ops.mesh.primitive_cube_add, "twin", (-4, 0, 0), size=1)
b = add(bpy.ops.mesh.primitive_cube_add, "twin_b", (-4, 3, 0), size=1)
bpy.ops.object.select_all(action="DESELECT")
a.select_set(True)
b.select_set(True)
bpy.context.view_layer.objects.active = a
try:
    bpy.ops.object.join()
except RuntimeError:        # a GUI Blender 4+ at start-up: the window's context is not yet this view layer's
    wins = bpy.context.window_manager.windows
    win = {"window": wins[0], "screen": wins[0].screen} if len(wins) else {}
    with bpy.context.temp_override(active_object=a, object=a, selected_objects=[a, b], selected_editable_objects=[a, b],
                                   **win):
        bpy.ops.object.join()
arr = add(bpy.ops.mesh.primitive_cube_add, "arrayed", (0, 5, 0), size=1)
mod = arr.modifiers.new("array", "ARRAY")
mod.count, mod.use_relative_offset, mod.relative_offset_displace = 3, True, (2.0, 0, 0)
wire = bpy.data.meshes.new("wire_mesh")
wire.from_pydata([(0, 0, 0), (1, 0, 0), (5, 5, 5)], [(0, 1)], [])
wobj = bpy.data.objects.new("wire", wire)
bpy.context.scene.collection.objects.link(wobj)
rot = add(bpy.ops.mesh.primitive_cube_add, "turned", (0, -5, 1), size=2)
rot.rotation_euler = (0, 0, 0.7853981634)
rot.scale = (1, 1, 2)
bpy.ops.object.empty_add(location=(9, 9, 9))
bpy.context.view_layer.objects.active.name = "marker"

for img in list(bpy.data.images):      # a factory scene has Render Result and Viewer Node: the renders make them
    bpy.data.images.remove(img)
before = state()
rev = REVISION.value
reply, blob = look()
expect(reply.get("ok"), "look answers: %s" % reply.get("error"))
res = reply.get("result") or {}
objs = by_name(reply) if reply.get("ok") else {}
c = objs.get("cube", {})
expect((c.get("vertices"), c.get("faces"), c.get("non_manifold_edges"), c.get("loose_parts")) == (8, 6, 0, 1),
       "a cube: 8 vertices, 6 faces, 0 non-manifold, 1 loose part: %s" % c)
expect(c.get("bounds") == {"min": [-1.0, -1.0, -1.0], "max": [1.0, 1.0, 1.0]}, "the cube's bounds: %s" % c.get("bounds"))
p = objs.get("plane", {})
expect((p.get("vertices"), p.get("faces"), p.get("non_manifold_edges"), p.get("loose_parts")) == (4, 1, 4, 1),
       "a plane: 4 boundary edges are non-manifold: %s" % p)
expect(p.get("bounds") == {"min": [3.0, -1.0, 0.0], "max": [5.0, 1.0, 0.0]}, "the plane's bounds in world space: %s" % p.get("bounds"))
t = objs.get("twin", {})
expect((t.get("vertices"), t.get("faces"), t.get("non_manifold_edges"), t.get("loose_parts")) == (16, 12, 0, 2),
       "two cubes joined: 2 loose parts: %s" % t)
r = objs.get("arrayed", {})
expect((r.get("vertices"), r.get("faces"), r.get("loose_parts")) == (24, 18, 3),
       "an array modifier is applied first: 3 cubes, 3 parts: %s" % r)
expect(r.get("bounds") and abs(r["bounds"]["max"][0] - 4.5) < 1e-4, "the array's bounds span its copies: %s" % r.get("bounds"))
w = objs.get("wire", {})
expect((w.get("vertices"), w.get("faces"), w.get("non_manifold_edges"), w.get("loose_parts")) == (3, 0, 1, 2),
       "a wire edge is non-manifold, a lone vertex its own part: %s" % w)
tb = (objs.get("turned") or {}).get("bounds") or {}
expect(tb and abs(tb["max"][0] - 2 ** 0.5) < 1e-4 and abs(tb["min"][2] - (-1.0)) < 1e-4 and abs(tb["max"][2] - 3.0) < 1e-4,
       "bounds follow rotation and scale: %s" % tb)
m = objs.get("marker", {})
expect(m.get("type") == "EMPTY" and m.get("vertices") is None and m.get("bounds") is None, "an empty has no geometry: %s" % m)
tot = res.get("totals", {})
expect(res.get("count") == 7 and tot.get("objects") == 7 and tot.get("with_geometry") == 6,
       "count and totals count every object: %s %s" % (res.get("count"), tot))
expect(tot.get("vertices") == 8 + 4 + 16 + 24 + 3 + 8 and tot.get("faces") == 6 + 1 + 12 + 18 + 0 + 6
       and tot.get("non_manifold_edges") == 4 + 1 and tot.get("loose_parts") == 1 + 1 + 2 + 3 + 2 + 1,
       "totals add up: %s" % tot)
expect(res.get("angles") == ["front", "right", "top", "perspective"], "four views by default: %s" % res.get("angles"))
expect((res.get("width"), res.get("height")) == (320, 240), "320x240 per view by default")
expect(res.get("sheet") == {"width": 640, "height": 480} and png_size(blob) == (640, 480),
       "a 2x2 sheet PNG: %s, header %s" % (res.get("sheet"), png_size(blob) if blob else None))
expect(res.get("bytes") == len(blob), "bytes is the blob's length")
expect(state() == before, "the scene is as before: %s" % ({k: (before[k], v) for k, v in state().items() if before[k] != v}))
expect(REVISION.value == rev, "the scene revision did not move")
if blob and png_size(blob):
    px = png_rows(blob)
    cells = [px[y:y + 240, x:x + 320, :3] for y in (0, 240) for x in (0, 320)]
    expect(all(len(np.unique(cell.reshape(-1, 3), axis=0)) > 20 for cell in cells),
           "every view shows something (not one flat colour)")
    expect(not all(np.array_equal(cells[0], cl) for cl in cells[1:]), "the views differ")

# ---- a camera of the scene's own is kept as the scene camera
bpy.ops.object.camera_add(location=(0, -10, 2))
own = bpy.context.view_layer.objects.active
own.name = "own_cam"
bpy.context.scene.camera = own
before = state()
reply, blob = look(angles=3, width=100, height=80)
res = reply.get("result") or {}
expect(reply.get("ok") and res.get("angles") == ["front", "right", "top"], "three views: %s" % res.get("angles"))
expect(res.get("sheet") == {"width": 200, "height": 160} and png_size(blob) == (200, 160), "odd angles: 2 columns, 2 rows")
expect(by_name(reply).get("own_cam", {}).get("vertices", 0) is None, "a camera is listed, without geometry")
expect(state() == before, "the scene camera and the rest are as before")

# ---- arguments
reply, blob = look(angles=1, width=10, height=5000)
res = reply.get("result") or {}
expect(reply.get("ok") and (res.get("width"), res.get("height")) == (64, 1024), "sizes clamped to 64..1024: %s" % res)
expect(res.get("sheet") == {"width": 64, "height": 1024} and png_size(blob) == (64, 1024), "one view: one column")
expect(res.get("angles") == ["front"], "one view: the front")
reply, blob = look(angles=8, width=64, height=64)
res = reply.get("result") or {}
expect(reply.get("ok") and len(res.get("angles", [])) == 8 and len(set(res["angles"])) == 8
       and res.get("sheet") == {"width": 128, "height": 256}, "eight views, named apart: %s" % res.get("angles"))
for bad in (0, 9, -1, "4", 2.5, True):
    reply, blob = look(angles=bad)
    expect(not reply.get("ok") and "angles" in reply.get("error", "") and blob == b"", "angles %r refused: %s" % (bad, reply.get("error")))
reply, _ = look(width="wide")
expect(not reply.get("ok"), "a width that is no integer is refused")

# ---- an empty scene: still a sheet, no objects
cmd_reset_scene({})
before = state()
reply, blob = look(angles=2, width=64, height=64)
res = reply.get("result") or {}
expect(reply.get("ok") and res.get("count") == 0 and res.get("objects") == [] and png_size(blob) == (128, 64),
       "an empty scene: a sheet and no objects: %s" % reply.get("error"))
expect(state() == before, "an empty scene stays empty")

# ---- at most 500 listed
base = bpy.data.meshes.new("tiny")
base.from_pydata([(0, 0, 0)], [], [])
for i in range(510):
    o = bpy.data.objects.new("dot%03d" % i, base)
    bpy.context.scene.collection.objects.link(o)
reply, blob = look(angles=1, width=64, height=64)
res = reply.get("result") or {}
expect(reply.get("ok") and res.get("count") == 510 and len(res.get("objects", [])) == 500
       and res["objects"][0]["name"] == "dot000" and res.get("totals", {}).get("vertices") == 510,
       "510 objects: 500 listed by name, count and totals cover all: %s %s" % (res.get("count"), res.get("totals")))

print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
