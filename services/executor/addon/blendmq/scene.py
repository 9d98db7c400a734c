"""scene — reading the live scene (scene_info, object_info), emptying it (reset_scene), and the
selection helpers steps use."""
import math

import bpy
import mathutils

from . import compat
from .args import CommandError, s_int_arg


def s_ensure_object_mode():
    active = bpy.context.view_layer.objects.active
    if active is not None and active.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")


def s_select_only(name):
    vl = bpy.context.view_layer
    obj = vl.objects.get(name)
    if obj is None:
        raise CommandError("no object named %s" % name)
    s_ensure_object_mode()
    compat.deselect_all(vl)
    obj.select_set(True)
    vl.objects.active = obj
    return obj


def s_target_object(name):
    vl = bpy.context.view_layer
    obj = vl.objects.get(name) if name is not None else vl.objects.active
    if obj is None:
        raise CommandError("no object named %s" % name if name is not None
                           else "no target given and no active object")
    return obj


def s_round(v):
    return [round(float(x), 6) for x in v]


def s_obj_dict(o):
    return {"name": o.name, "type": o.type, "location": s_round(o.location),
            "rotation": s_round(o.rotation_euler), "scale": s_round(o.scale),
            "dimensions": s_round(o.dimensions),
            "materials": [s.material.name for s in o.material_slots if s.material]}


def s_object_info_dict(o):
    out = s_obj_dict(o)
    if o.type == "MESH":
        out["vertices"], out["faces"] = len(o.data.vertices), len(o.data.polygons)
    return out


def s_page(args):
    """scene_info's paging arguments, checked."""
    return s_int_arg(args, "limit", 100, 0, 1000), s_int_arg(args, "offset", 0, 0, 1 << 31)


def s_object_name(args):
    name = args.get("name")
    if not isinstance(name, str):
        raise CommandError("object_info: name must be a string")
    return name


def cmd_scene_info(args):
    limit, offset = s_page(args)
    bpy.context.view_layer.update()      # dimensions come from evaluated data
    objs = sorted(bpy.context.scene.objects, key=lambda o: o.name)
    return {"count": len(objs), "objects": [s_obj_dict(o) for o in objs[offset:offset + limit]]}, None


NAMES_MAX, NAMES_BYTES = 20000, 512 * 1024


def s_names_reply(names):
    """scene_names' result from sorted names: cut at NAMES_MAX names or NAMES_BYTES."""
    out, size = [], 0
    for n in names[:NAMES_MAX]:
        size += len(n) + 4
        if size > NAMES_BYTES:
            break
        out.append(n)
    return {"names": out, "count": len(names), "truncated": len(out) < len(names)}


BOXES_MAX = 4096
NO_BOX_TYPES = frozenset(("CAMERA", "LIGHT", "LIGHT_PROBE", "LIGHTPROBE", "SPEAKER", "EMPTY"))


def s_world_box(o):
    """The object's world-space axis-aligned box {min, max} (evaluated bounds), or None for a
    thing with no body (a camera, a light, an empty) or a box that is not finite."""
    if o.type in NO_BOX_TYPES:
        return None
    m = o.matrix_world
    lo, hi = [float("inf")] * 3, [float("-inf")] * 3
    for corner in o.bound_box:
        w = m @ mathutils.Vector(corner)
        for a in range(3):
            lo[a] = min(lo[a], w[a])
            hi[a] = max(hi[a], w[a])
    if not all(math.isfinite(v) and abs(v) < 1e6 for v in lo + hi):
        return None
    return {"min": [round(v, 3) for v in lo], "max": [round(v, 3) for v in hi]}


def scene_boxes(objects):
    """What the scene's things occupy, for placing new work clear of it (issue 29): the world
    boxes of the first BOXES_MAX objects (by name) that have a body."""
    out = []
    for o in objects:
        box = s_world_box(o)
        if box is not None:
            out.append(box)
            if len(out) >= BOXES_MAX:
                break
    return out


def cmd_scene_names(args):
    bpy.context.view_layer.update()      # bounds come from evaluated data
    objects = sorted(bpy.context.scene.objects, key=lambda o: o.name)
    reply = s_names_reply([o.name for o in objects])
    reply["boxes"] = scene_boxes(objects)
    return reply, None


class REVISION:
    """The scene's revision (every reply carries it as rev): moved by each command that may add,
    remove or rename objects and, in a GUI Blender, by every change notice."""
    value = 0

    @classmethod
    def bump(cls, *_args):
        cls.value += 1


def cmd_object_info(args):
    name = s_object_name(args)
    obj = bpy.context.scene.objects.get(name)
    if obj is None:
        raise CommandError("no object named %s" % name)
    bpy.context.view_layer.update()
    return s_object_info_dict(obj), None


def s_id_count():
    skip = ("screens", "window_managers", "workspaces")
    n = 0
    for prop in bpy.data.bl_rna.properties:
        if prop.type == "COLLECTION" and prop.identifier not in skip and prop.fixed_type is not None \
                and isinstance(getattr(bpy.data, prop.identifier, None), bpy.types.bpy_prop_collection):
            try:
                n += len(getattr(bpy.data, prop.identifier))
            except TypeError:
                pass
    return n


def reset_everything():
    """Blender's factory scene, emptied (issue 23): every object and every data block goes,
    orphans included; the scene's settings, compositor, world and custom properties are the
    factory ones (read_homefile with factory startup and use_empty: only the scene, windows
    and workspaces are kept; the add-on's Python state is untouched, and its handlers and
    timers are persistent). In a GUI Blender the user's startup file is the base instead. Returns (objects_removed, data_removed)."""
    s_ensure_object_mode()
    objects, ids = len(bpy.data.objects), s_id_count()
    # Headless Blender runs with --factory-startup; a GUI Blender keeps its user's startup file and
    # preferences (factory startup there would reset the preferences and the add-ons with them).
    res = bpy.ops.wm.read_homefile(use_factory_startup=bool(bpy.app.background), use_empty=True, load_ui=False)
    if "FINISHED" not in res:
        raise CommandError("reset_scene: reading the factory scene failed: %s" % sorted(res))
    return objects, max(0, ids - objects - s_id_count())


def cmd_reset_scene(args):
    """reset_scene: everything reset, then committed (durably with --state-dir) before the reply."""
    from . import durable
    objects, data = reset_everything()
    return {"objects_removed": objects, "data_removed": data, "fingerprint": durable.commit("reset_scene")}, None
