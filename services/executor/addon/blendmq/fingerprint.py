"""fingerprint — a deterministic deep digest of the whole Blender state (issue 23).

STANDALONE: imports only bpy and the standard library (the sandbox runner imports this file from
its own folder, outside the blendmq package).

compute() walks every ID of bpy.data through RNA, generically: each ID's properties, the structs
it owns (modifiers, constraints, node trees and their nodes, links and socket values, render and
compositor settings, splines, bones...) down to a depth cap with a cycle guard, the geometry of
large homogeneous collections (vertices, edges, polygons, loops, attribute data, uv layers,
spline points...) through foreach_get, and every custom property. A pointer to another ID is
recorded as (type, name, library); a collection of IDs as their names in order. Data with no
users is included (it is in bpy.data like the rest).

The same state gives the same digest in any process: nothing hashed is an address (as_pointer
is used only for the cycle guard), no salted hash() is used (values are serialised with marshal
version 2, which has no references and no interning flags, then hashed with BLAKE2b), floats
are hashed by their exact bytes (Python floats as IEEE doubles; large collections as the
float32 Blender stores). An ID's digest is BLAKE2b over all its serialised properties (one
marshal of the sorted (property, value) pairs, the same whether per-property digests are asked
for or not); the
per-property digests that name what changed in a diff are CRC-32 + Adler-32 of each property's
bytes (cheap; a collision could only drop a name from a diff, never hide a change of digest).

Left out, because they are not the scene's state or are not the same in every process: UI IDs
(screens, window managers, workspaces), Blender's own images (Render Result, Viewer Node),
image pixels (an image is its source, path, packed size and settings), read-only scalar
properties (derived: users, normals, bounding boxes, session_uid, is_evaluated...), matrices
the depsgraph computes (matrix_world, matrix_local, matrix_basis, dimensions) and back
references computed by scanning (Object.children, users_collection, Scene.objects...).

API:
  compute(limit_ms=None, props=True) -> {"digest": hex64, "count": n,
      "ids": {"<TYPE>:<name>": {"digest": hex32, "props": {prop: hex16}}}, "ms": float}
  diff(before, after, limit=NAMES_MAX) -> {"added", "removed", "changed": [{"id", "props"}],
      "added_count", "removed_count", "changed_count"}
"""
import array
import hashlib
import marshal
import time
import zlib

import bpy

VERSION = 1
NAMES_MAX = 256             # names per list in a diff (the counts are exact)
DEPTH_MAX = 8               # nested non-ID structs below an ID
FAST_MIN = 2                # collections at least this long: numeric properties via foreach_get
SKIP_COLLECTIONS = frozenset(("screens", "window_managers", "workspaces",
                              "all_ids"))          # Blender 5: every ID again (UI data too)
SKIP_PROPS = frozenset((
    "rna_type", "session_uid", "is_evaluated", "original", "users", "is_dirty", "preview", "tag",
    "is_runtime_data", "is_missing", "is_library_indirect", "name_full", "use_extra_user",
    "users_collection", "users_scene", "children_recursive", "all_objects", "bound_box",
    "dimensions", "matrix_world", "matrix_local", "matrix_basis", "loop_triangles",
    "loop_triangle_polygons", "vertex_normals", "polygon_normals", "depsgraph", "pixels",
    "bindcode", "is_editmode", "is_embedded_data", "id_data", "bl_rna", "override_library",
    "library_weak_reference", "asset_data", "mode",
))
# (struct type, property): back references computed by scanning, or derived lists.
SKIP_PAIRS = frozenset((
    ("Object", "children"), ("Bone", "children"), ("EditBone", "children"), ("PoseBone", "children"),
    ("Scene", "objects"), ("ViewLayer", "objects"), ("NodeSocket", "links"), ("NodeSocket", "node"),
    ("Scene", "statistics"), ("SequenceEditor", "sequences_all"), ("Node", "internal_links"),
    ("Node", "dimensions"),
    ("MeshPolygon", "vertices"),        # a dynamic array; the loops (loop_start, loop_total, vertex_index) say it
    # enums whose stored value matches no item (Blender warns on every read): UI icons
    ("BrushGpencilSettings", "gpencil_paint_icon"), ("BrushGpencilSettings", "gpencil_sculpt_icon"),
    ("BrushGpencilSettings", "gpencil_weight_icon"), ("BrushGpencilSettings", "gpencil_vertex_icon"),
    ("BrushTextureSlot", "output_node"), ("Brush", "direction"), ("Brush", "gpencil_weight_tool"),
    ("CyclesRenderSettings", "denoiser"), ("ColorManagedInputColorspaceSettings", "name"),
    ("ToolSettings", "uv_sculpt"),      # Blender 4.3: its brush pointers dangle (reading one crashes)
    ("Mesh", "uv_layer_clone"), ("Mesh", "uv_layer_stencil"),  # one of uv_layers (the *_index says which)
    ("NodeSocket", "enabled"),          # derived from the node's settings; 4.x updates it only on load
))
# ID properties Blender itself writes into a saved file for older versions to read (4.x: a
# camera's fisheye settings as the old Cycles group), present after a load, never live:
# skipped where the type has no RNA property of that name (Blender 3.x's Cycles registers one)
FORWARD_COMPAT = {"Camera": ("cycles",)}
INTERNAL_IMAGE_TYPES = ("RENDER_RESULT", "COMPOSITING")
# Non-ID structs a pointer names rather than walks: they are walked where they live.
NAMED_TYPES = tuple(getattr(bpy.types, n) for n in (
    "Node", "NodeSocket", "NodeSocketInterface", "Bone", "PoseBone", "EditBone", "ViewLayer",
    "LayerCollection", "NodeTreeInterfaceSocket") if hasattr(bpy.types, n))
NUMERIC = {"FLOAT": "f", "INT": "i", "BOOLEAN": "b"}


class FingerprintLimit(Exception):
    """compute() ran past its limit_ms."""


TAGS = {}                   # RNA type identifier -> the ID type's tag ("OBJECT", "MESH", "NODETREE"...)


def s_tag(block):
    """The ID type of `block`: its bpy.data collection's item type, upper case (the same for
    every subtype: a SunLight is a LIGHT, a ShaderNodeTree a NODETREE)."""
    rna = block.bl_rna
    tag = TAGS.get(rna.identifier)
    if tag is None:
        s_collections()
        tag = "ID"
        for name in s_base_names(rna):
            if name in ROOTS:
                tag = name.upper()
                break
        TAGS[rna.identifier] = tag
    return tag


ROOTS = set()               # the item types of bpy.data's collections


def s_collections():
    """bpy.data's ID collections the fingerprint covers: [(identifier, tag)]."""
    out = []
    for prop in bpy.data.bl_rna.properties:
        if prop.type != "COLLECTION" or prop.fixed_type is None:
            continue
        if "ID" not in s_base_names(prop.fixed_type):
            continue
        ROOTS.add(prop.fixed_type.identifier)
        if prop.identifier not in SKIP_COLLECTIONS:
            out.append((prop.identifier, prop.fixed_type.identifier.upper()))
    return out


def id_key(block):
    """"<TYPE>:<name>" ("<TYPE>@<library>:<name>" for linked data): the same in every process."""
    lib = block.library
    if lib is None:
        return "%s:%s" % (s_tag(block), block.name)
    return "%s@%s:%s" % (s_tag(block), lib.name, block.name)


def s_id_ref(block):
    if block is None:
        return None
    lib = block.library
    return ("ID", s_tag(block), block.name, None if lib is None else lib.name)


def s_base_names(rna):
    out = []
    while rna is not None:
        out.append(rna.identifier)
        rna = rna.base
    return out


# Headless only: struct identifier -> (its property names, its plan), kept across computes, for
# types whose properties are all Blender's own (none is_runtime): a property registered from
# Python can be freed (an add-on disabled) while a kept plan still names it. A GUI Blender makes
# the plans anew every compute.
PLANS = {}


class s_Walker:
    """Serialises RNA structs into nested tuples marshal can encode. One per compute()."""

    def __init__(self, deadline=None):
        self.plans = {}         # struct identifier -> [(identifier, kind, prop)]
        self.capable = {}       # struct identifier -> can it hold custom properties
        self.deadline = deadline
        self.visited = set()

    # ---- what to read, per struct type (RNA definitions do not change within one compute)

    def plan(self, rna):
        ident = rna.identifier
        plan = self.plans.get(ident)
        if plan is not None:
            return plan
        # headless, the plans are kept across computes, each checked once per compute against
        # the type's property names (a property registered or removed since makes a new plan)
        keys = None
        if bpy.app.background:
            keys = tuple(rna.properties.keys())
            kept = PLANS.get(ident)
            if kept is not None and kept[0] == keys:
                self.plans[ident] = kept[1]
                return kept[1]
        bases = s_base_names(rna)
        plan = []
        for prop in rna.properties:
            pid = prop.identifier
            if keys is not None and getattr(prop, "is_runtime", True):
                keys = None             # a property registered from Python: never kept (it can be freed)
            if pid in SKIP_PROPS or any((b, pid) in SKIP_PAIRS for b in bases):
                continue
            ptype = prop.type
            if ptype == "POINTER":
                kind = "P"
            elif ptype == "COLLECTION":
                kind = "C"
            elif prop.is_readonly:
                continue                # derived scalars and arrays
            elif ptype == "ENUM" and prop.is_enum_flag:
                kind = "F"
            elif ptype in NUMERIC and prop.is_array:
                kind = "A2" if len([d for d in prop.array_dimensions if d]) >= 2 else "A1"
            else:
                kind = "S"
            plan.append((pid, kind, ptype, prop))
        self.plans[ident] = plan
        if keys is not None:
            PLANS[ident] = (keys, plan)
        return plan

    # ---- values

    def value(self, v, depth):
        if v is None or isinstance(v, (bool, int, float, str, bytes)):
            return v
        if isinstance(v, bpy.types.ID):
            return s_id_ref(v)
        if isinstance(v, bpy.types.bpy_struct):
            return self.struct(v, depth + 1)
        if hasattr(v, "to_list"):               # IDPropertyArray
            return ("A", tuple(self.value(x, depth) for x in v.to_list()))
        if hasattr(v, "to_dict"):               # IDPropertyGroup
            return ("G", tuple((k, self.value(v[k], depth)) for k in sorted(v.keys())))
        if isinstance(v, set):                  # enum flags
            return ("S", tuple(sorted(v)))
        try:
            seq = list(v)                       # vectors, colours, matrices, bpy_prop_array
        except TypeError:
            return ("?", type(v).__name__)
        return tuple(self.value(x, depth) for x in seq)

    def custom(self, owner, depth):
        """The ID properties of `owner`, by key (RNA-registered groups included)."""
        try:
            keys = owner.keys()
        except (TypeError, AttributeError):
            return None
        if not keys:
            return None
        out = []
        compat = FORWARD_COMPAT.get(owner.bl_rna.identifier, ())
        for k in sorted(keys):
            if k in compat and k not in owner.bl_rna.properties:
                continue
            try:
                out.append((k, self.value(owner[k], depth)))
            except Exception as e:              # a property Python cannot read: note its kind
                out.append((k, ("!", type(e).__name__)))
        return tuple(out) or None

    def prop(self, owner, pid, kind, prop, depth):
        try:
            v = getattr(owner, pid)
        except Exception as e:
            return ("!", type(e).__name__)
        if kind == "S":
            return v
        if kind == "A1":
            return tuple(v)
        if kind == "A2":
            return tuple(tuple(row) for row in v)
        if kind == "P":
            if v is None:
                return None
            if isinstance(v, bpy.types.ID):
                if v.is_embedded_data:          # a material's node tree, a scene's compositor
                    return self.struct(v, depth + 1)
                return s_id_ref(v)
            if isinstance(v, NAMED_TYPES):
                return self.named(v)
            return self.struct(v, depth + 1)
        if kind == "C":
            return self.collection(v, prop, depth)
        return ("S", tuple(sorted(v)))          # F: enum flags

    def named(self, v):
        if isinstance(v, bpy.types.NodeSocket):
            node = v.node
            return ("socket", node.name if node is not None else None, v.identifier, v.is_output)
        return (type(v).__name__, getattr(v, "name", None))

    def struct(self, s, depth):
        if depth > DEPTH_MAX:
            return ("depth",)
        # the cycle guard only, never hashed; with the type: 4.x's UV layers and their float2
        # attributes are two RNA views of one C struct (the same pointer)
        rna = s.bl_rna
        ident = rna.identifier
        key = (s.as_pointer(), ident)
        visited = self.visited
        if key in visited:
            return ("seen", ident)
        visited.add(key)
        out = [ident]
        prop = self.prop
        for pid, kind, _ptype, p in self.plan(rna):
            if kind == "S":             # plain scalars inline (most properties): prop()'s "S" case
                try:
                    out.append(getattr(s, pid))
                except Exception as e:
                    out.append(("!", type(e).__name__))
            else:
                out.append(prop(s, pid, kind, p, depth))
        # custom properties: only types that can hold them (the same for every struct of a type)
        capable = self.capable.get(ident)
        if capable is None:
            capable = self.capable[ident] = s_idprops_capable(s)
        if capable:
            c = self.custom(s, depth)
            if c is not None:
                out.append(("custom", c))
        return tuple(out)

    def collection(self, coll, prop, depth):
        n = len(coll)
        if n == 0:
            return ()
        fixed = prop.fixed_type
        if fixed is not None and "ID" in s_base_names(fixed):
            return ("IDS", tuple(s_id_ref(b) for b in coll))
        first = coll[0]
        if first is None:
            return tuple(None if x is None else self.struct(x, depth + 1) for x in coll)
        if isinstance(first, NAMED_TYPES) and prop.identifier not in ("nodes", "inputs", "outputs", "bones",
                                                                      "edit_bones", "view_layers",
                                                                      "layer_collection", "children"):
            return ("NAMES", tuple(self.named(x) for x in coll))
        if n >= FAST_MIN and fixed is not None and first.bl_rna.identifier == fixed.identifier:
            return self.fast(coll, n, first.bl_rna, depth)
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise FingerprintLimit()
        return tuple(self.struct(x, depth + 1) for x in coll)

    def fast(self, coll, n, rna, depth):
        """A long homogeneous collection (vertices, loops, attribute data...): each numeric
        property of all items at once through foreach_get; the others item by item."""
        out = ["FAST", rna.identifier, n]
        rest = []
        for pid, kind, ptype, prop in self.plan(rna):
            code = NUMERIC.get(ptype)
            if code is not None:
                length = prop.array_length if getattr(prop, "is_array", False) else 0
                dims = [d for d in getattr(prop, "array_dimensions", ()) if d]
                if length == 0 and getattr(prop, "is_array", False):
                    rest.append((pid, kind, prop))  # dynamic arrays: item by item
                    continue
                size = 1
                for d in (dims or [length or 1]):
                    size *= d
                buf = array.array(code, bytes(array.array(code).itemsize * n * size))
                try:
                    coll.foreach_get(pid, buf)
                except (TypeError, RuntimeError, AttributeError):
                    rest.append((pid, kind, prop))
                    continue
                out.append((pid, buf.tobytes()))
            else:
                rest.append((pid, kind, prop))
        # nested collections empty in every item (a vertex's weight groups in a mesh with no
        # weights) are read by length only, and items that cannot hold custom properties skip
        # that look: a 2,000-vertex sphere costs 0.3 ms instead of 6
        idprops = s_idprops_capable(coll[0])
        for entry in [e for e in rest if e[1] == "C"]:
            pid = entry[0]
            try:
                empty = not any(len(getattr(x, pid)) for x in coll)
            except (TypeError, AttributeError, RuntimeError):
                continue
            if empty:
                rest.remove(entry)
                out.append((pid, "EMPTY"))
        if rest or idprops:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                raise FingerprintLimit()
            items = []
            for x in coll:
                row = [self.prop(x, pid, kind, prop, depth + 1) for pid, kind, prop in rest]
                c = self.custom(x, depth + 1) if idprops else None
                if c is not None:
                    row.append(("custom", c))
                items.append(tuple(row))
            out.append(tuple(items))
        return tuple(out)

    # ---- one ID

    def id_props(self, block):
        """{top-level property: serialised value} of one ID (custom properties as "[custom]")."""
        self.visited = set()
        self.visited.add((block.as_pointer(), block.bl_rna.identifier))
        out = {}
        for pid, kind, _ptype, prop in self.plan(block.bl_rna):
            if kind == "S":
                try:
                    out[pid] = getattr(block, pid)
                except Exception as e:
                    out[pid] = ("!", type(e).__name__)
            else:
                out[pid] = self.prop(block, pid, kind, prop, 0)
        c = self.custom(block, 0)
        if c is not None:
            out["[custom]"] = c
        return out


def s_idprops_capable(item):
    """Can structs of this type hold custom properties? (bpy_struct.keys raises TypeError for
    types that cannot, whatever the item.)"""
    try:
        item.keys()
    except (TypeError, AttributeError):
        return False
    return True


def s_dump(v):
    try:
        return marshal.dumps(v, 2)
    except ValueError:                          # something marshal cannot encode: its repr-free shape
        return marshal.dumps(s_plain(v), 2)


def s_plain(v):
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return v
    if isinstance(v, (tuple, list)):
        return tuple(s_plain(x) for x in v)
    return ("?", type(v).__name__)


def id_blocks():
    """(key, ID) for every ID the fingerprint covers, sorted by key."""
    out = []
    for ident, tag in s_collections():
        for block in getattr(bpy.data, ident):
            if tag == "IMAGE" and block.type in INTERNAL_IMAGE_TYPES:
                continue
            lib = block.library
            out.append(("%s:%s" % (tag, block.name) if lib is None else "%s@%s:%s" % (tag, lib.name, block.name),
                        block))
    out.sort(key=lambda kb: kb[0])
    return out


def compute(limit_ms=None, props=True):
    """The fingerprint of the whole state now (see the module's doc). Raises FingerprintLimit
    when limit_ms passes first."""
    t0 = time.perf_counter()
    walker = s_Walker(None if limit_ms is None else t0 + limit_ms / 1000.0)
    ids = {}
    total = hashlib.blake2b(digest_size=32)
    total.update(b"blendmq-fingerprint-%d\0" % VERSION)
    for key, block in id_blocks():
        if walker.deadline is not None and time.perf_counter() > walker.deadline:
            raise FingerprintLimit()
        values = walker.id_props(block)
        items = tuple(sorted(values.items()))
        d = hashlib.blake2b(s_dump(items), digest_size=16).hexdigest()
        table = {}
        if props:                               # per property, for diff(): only when asked
            for pid, v in items:
                data = s_dump(v)
                table[pid] = "%08x%08x" % (zlib.crc32(data), zlib.adler32(data))
        ids[key] = {"digest": d, "props": table} if props else {"digest": d}
        total.update(key.encode("utf-8", "surrogatepass") + b"\0" + bytes.fromhex(d))
    return {"digest": total.hexdigest(), "count": len(ids), "ids": ids,
            "ms": (time.perf_counter() - t0) * 1000.0}


def diff(before, after, limit=NAMES_MAX):
    """What changed between two compute() results: IDs added, removed, and changed with the
    top-level properties whose digests differ (lists cut at `limit`, counts exact)."""
    b, a = before.get("ids", {}), after.get("ids", {})
    added = sorted(k for k in a if k not in b)
    removed = sorted(k for k in b if k not in a)
    changed = []
    for k in sorted(k for k in a if k in b and a[k]["digest"] != b[k]["digest"]):
        bp, ap = b[k].get("props") or {}, a[k].get("props") or {}
        names = sorted(p for p in set(bp) | set(ap) if bp.get(p) != ap.get(p))
        changed.append({"id": k, "props": names[:64]})
    return {"added": added[:limit], "removed": removed[:limit], "changed": changed[:limit],
            "added_count": len(added), "removed_count": len(removed), "changed_count": len(changed)}


def object_names(keys):
    """The object names among fingerprint keys ("OBJECT:<name>" of local objects)."""
    return [k[7:] for k in keys if k.startswith("OBJECT:")]
