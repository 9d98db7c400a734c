"""edit_ops — edit mode for plan steps (issue 27).

A mesh editing step (bpy.ops.mesh.* other than the primitives, and the builtins mesh.extrude
and mesh.loop_cut) puts its object (the target, else the active object) in edit mode first;
bpy.ops.object.mode_set switches explicitly; every other step puts the active object back in
object mode first, and so does every commit (durable.commit: a plan's end, a step outside a
plan), so an edit mesh is always written back before the scene is saved or fingerprinted.
A failed step is rolled back by loading the plan's snapshot (transaction.py), which was saved
in object mode: the object is in object mode after a failure too.

Edit steps act on the selection, as in Blender: a new primitive in edit mode has everything
selected; bpy.ops.mesh.select_all changes that."""
import bmesh
import bpy

from . import bounds
from .args import CommandError, s_num
from .scene import s_ensure_object_mode, s_select_only, s_target_object

EDIT_BUILTIN_NAMES = ("mesh.extrude", "mesh.loop_cut", "mesh.translate")


def is_edit_step(operation):
    """True for steps that run in edit mode."""
    if operation in EDIT_BUILTIN_NAMES:
        return True
    return operation.startswith("bpy.ops.mesh.") and not operation.startswith("bpy.ops.mesh.primitive_")


def enter_edit(target):
    """The step's object in edit mode, active and alone selected. Returns it."""
    obj = s_target_object(target)
    if obj.type != "MESH":
        raise CommandError("%s is a %s: edit steps work on meshes" % (obj.name, obj.type))
    vl = bpy.context.view_layer
    if not (vl.objects.active == obj and obj.mode == "EDIT"):
        s_select_only(obj.name)             # leaves any other object's edit mode first
        bpy.ops.object.mode_set(mode="EDIT")
    return obj


def leave_edit():
    s_ensure_object_mode()


def s_vec(p, spec, key):
    v = bounds.value(p, spec, key)
    if not (isinstance(v, list) and len(v) == 3 and all(s_num(x) for x in v)):
        raise CommandError("%s must be [x, y, z]" % key)
    return tuple(float(x) for x in v)


def s_builtin_extrude(obj, p, spec):
    """Extrude the selection, then move it by offset and/or push it along its normals."""
    where = "mesh.extrude"
    offset, distance = s_vec(p, spec, "offset"), bounds.value(p, spec, "distance")
    if not s_num(distance):
        raise CommandError("%s: distance must be a number" % where)
    enter_edit(obj.name)
    bm = bmesh.from_edit_mesh(obj.data)
    if not any(v.select for v in bm.verts):
        raise CommandError("%s: nothing is selected on %s (bpy.ops.mesh.select_all first)" % (where, obj.name))
    res = bpy.ops.mesh.extrude_region_move(TRANSFORM_OT_translate={"value": offset})
    if res != {"FINISHED"}:
        raise CommandError("%s: extrude returned %s" % (where, "/".join(sorted(res))))
    if distance:
        res = bpy.ops.transform.shrink_fatten(value=float(distance))
        if res != {"FINISHED"}:
            raise CommandError("%s: moving along the normals returned %s" % (where, "/".join(sorted(res))))


def s_ring(start):
    """The edges of the quad ring through `start` (both directions, stopping at a non-quad)."""
    ring, seen = [start], {start.index}
    for first in list(start.link_faces)[:2]:
        edge, face = start, first
        while face is not None and len(face.edges) == 4:
            loop = next(lo for lo in face.loops if lo.edge == edge)
            edge = loop.link_loop_next.link_loop_next.edge
            if edge.index in seen:
                break
            seen.add(edge.index)
            ring.append(edge)
            others = [f for f in edge.link_faces if f != face]
            face = others[0] if others else None
    return ring


def s_builtin_loop_cut(obj, p, spec):
    """Loop cuts across the ring of quads through edge `edge` (Blender's loop cut needs a view)."""
    where = "mesh.loop_cut"
    cuts, index = int(bounds.value(p, spec, "cuts")), int(bounds.value(p, spec, "edge"))
    enter_edit(obj.name)
    bm = bmesh.from_edit_mesh(obj.data)
    bm.edges.ensure_lookup_table()
    if not 0 <= index < len(bm.edges):
        raise CommandError("%s: %s has %d edges, no edge %d" % (where, obj.name, len(bm.edges), index))
    ring = s_ring(bm.edges[index])
    if len(ring) < 2:
        raise CommandError("%s: edge %d of %s is on no ring of quads" % (where, index, obj.name))
    bmesh.ops.subdivide_edges(bm, edges=ring, cuts=cuts, use_grid_fill=True)
    bmesh.update_edit_mesh(obj.data)


def s_builtin_translate(obj, p, spec):
    """Move the selected vertices by offset, in the object's own axes (a profile off its axis)."""
    offset = s_vec(p, spec, "offset")
    enter_edit(obj.name)
    bm = bmesh.from_edit_mesh(obj.data)
    verts = [v for v in bm.verts if v.select]
    if not verts:
        raise CommandError("mesh.translate: nothing is selected on %s (bpy.ops.mesh.select_all first)" % obj.name)
    bmesh.ops.translate(bm, verts=verts, vec=offset)
    bmesh.update_edit_mesh(obj.data)


EDIT_BUILTINS = {"mesh.extrude": s_builtin_extrude, "mesh.loop_cut": s_builtin_loop_cut,
                 "mesh.translate": s_builtin_translate}
