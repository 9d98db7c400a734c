"""scene — reading the live scene (scene_info, object_info), emptying it (reset_scene), and the
selection helpers steps use."""
import bpy

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
    for o in list(vl.objects.selected):
        o.select_set(False)
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


def cmd_scene_names(args):
    return s_names_reply(sorted(o.name for o in bpy.context.scene.objects)), None


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


def cmd_reset_scene(args):
    s_ensure_object_mode()
    n = len(bpy.data.objects)
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o, do_unlink=True)
    purged = 0
    for _ in range(4):      # freeing meshes orphans their materials: go round until stable
        removed = 0
        for coll in (bpy.data.meshes, bpy.data.curves, bpy.data.metaballs, bpy.data.lattices,
                     bpy.data.armatures, bpy.data.cameras, bpy.data.lights, bpy.data.materials):
            for block in [b for b in coll if b.users == 0]:
                coll.remove(block)
                removed += 1
        purged += removed
        if not removed:
            break
    return {"objects_removed": n, "data_removed": purged}, None
