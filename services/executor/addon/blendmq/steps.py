"""steps — one plan step: a blendmq builtin (object.material, object.location, ...) or a
bpy.ops operator, run on the main thread (run_step). The step's operation must be one the
client named at hello and its parameters must fit the bounds it sent (bounds.py); the builtins
take their defaults from those bounds too: no bound is coded here."""
import math
import re

import bpy
from mathutils import Matrix, Quaternion, Vector

from . import bounds, compat, edit_ops, prop_paths
from .args import CommandError, s_num, s_only, s_tuples, s_vec3
from .asset_import import s_builtin_asset_import
from .capture import CAPTURE
from .scene import s_ensure_object_mode, s_select_only, s_target_object
from .transaction import TXN

OP_RE = re.compile(r"^bpy\.ops\.[a-z_]+\.[a-z0-9_]+$")

# ---------------------------------------------------------------------------- builtin steps
# Each takes (object, params, spec): params already fit spec, the operation's bounds from hello
# (bounds.check_step); bounds.value gives a parameter or its declared default.

def s_float(p, spec, key):
    v = bounds.value(p, spec, key)
    if not s_num(v):        # neither given nor declared with a default: the bounds are incomplete
        raise CommandError("%s has no value and its bounds declare no default" % key)
    return float(v)


def s_int(p, spec, key):
    return int(s_float(p, spec, key))


def s_builtin_material(obj, p, spec):
    where = "object.material"
    color = bounds.value(p, spec, "color")
    if not (isinstance(color, list) and len(color) in (3, 4) and all(s_num(c) for c in color)):
        raise CommandError("%s: color must be [r,g,b] or [r,g,b,a]" % where)
    rgba = tuple(float(c) for c in color) + ((1.0,) if len(color) == 3 else ())
    metallic = s_float(p, spec, "metallic")
    roughness = s_float(p, spec, "roughness")
    # issue 27: glass and glow (older bounds without them leave them out)
    transmission = s_float(p, spec, "transmission") if "transmission" in spec else None
    strength = s_float(p, spec, "emission_strength") if "emission_strength" in spec else None
    glow = bounds.value(p, spec, "emission_color") if "emission_color" in spec else None
    if glow is not None and not (isinstance(glow, list) and len(glow) in (3, 4) and all(s_num(c) for c in glow)):
        raise CommandError("%s: emission_color must be [r,g,b] or [r,g,b,a]" % where)
    if not hasattr(obj.data, "materials"):
        raise CommandError("%s: object %s (%s) cannot hold materials" % (where, obj.name, obj.type))
    name = obj.name + "_mat"
    mat = bpy.data.materials.get(name) or bpy.data.materials.new(name)   # re-colouring reuses it
    mat.use_nodes = True
    bsdf = next((n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = rgba
        bsdf.inputs["Metallic"].default_value = metallic
        bsdf.inputs["Roughness"].default_value = roughness
        if transmission is not None:
            compat.principled_input(bsdf, "transmission").default_value = transmission
        if glow is not None:
            compat.principled_input(bsdf, "emission").default_value = tuple(float(c) for c in glow[:3]) + (1.0,)
        if strength is not None:
            compat.principled_input(bsdf, "emission_strength").default_value = strength
    # Workbench (our preview renderer) and the solid viewport show these, not the nodes.
    mat.diffuse_color, mat.metallic, mat.roughness = rgba, metallic, roughness
    if obj.material_slots:
        obj.material_slots[0].material = mat
    else:
        obj.data.materials.append(mat)


def s_builtin_setter(attr):
    def apply(obj, p, spec):
        where = "object." + {"rotation_euler": "rotation"}.get(attr, attr)
        setattr(obj, attr, s_vec3({"value": bounds.value(p, spec, "value")}, "value", where))
    return apply


def s_builtin_parent(obj, p, spec):
    where = "object.parent"
    name = bounds.value(p, spec, "parent")
    if not isinstance(name, str) or not name:
        raise CommandError("%s: parent must be an object name" % where)
    parent = bpy.context.view_layer.objects.get(name)
    if parent is None:
        raise CommandError("%s: no object named %s" % (where, name[:80]))
    walk = parent
    while walk is not None:         # a parent may not be the object or one of its children
        if walk == obj:
            raise CommandError("%s: %s cannot be parented to %s (a cycle)" % (where, obj.name, parent.name))
        walk = walk.parent
    world = obj.matrix_world.copy()
    obj.parent = parent
    obj.matrix_parent_inverse = parent.matrix_world.inverted()
    obj.matrix_world = world


def s_builtin_modifier(obj, p, spec):
    """A modifier with bounded settings (only those of its type are used)."""
    where = "object.modifier"
    kind = bounds.value(p, spec, "type")
    if not isinstance(kind, str):
        raise CommandError("%s: type is required" % where)
    if obj.type != "MESH":
        raise CommandError("%s: %s is a %s, not a mesh" % (where, obj.name, obj.type))
    other = None
    other_name = bounds.value(p, spec, "object") if "object" in spec else None
    if kind in ("BOOLEAN", "SHRINKWRAP") and not other_name:
        raise CommandError("%s: %s needs object, the name of the other object" % (where, kind))
    if other_name is not None and kind in ("BOOLEAN", "SHRINKWRAP", "ARRAY"):
        other = bpy.context.view_layer.objects.get(other_name)
        if other is None:
            raise CommandError("%s: no object named %s" % (where, str(other_name)[:80]))
        if other == obj:
            raise CommandError("%s: %s cannot use itself" % (where, obj.name))
        if kind == "BOOLEAN" and other.type != "MESH":
            raise CommandError("%s: the boolean operand %s is a %s, not a mesh" % (where, other.name, other.type))
        if kind == "ARRAY" and other.type != "CURVE":
            raise CommandError("%s: an array fits along a curve; %s is a %s" % (where, other.name, other.type))
    mod = obj.modifiers.new(name=kind.title(), type=kind)
    if kind == "SUBSURF":
        mod.levels = mod.render_levels = s_int(p, spec, "levels")
    elif kind == "ARRAY":
        mod.count = s_int(p, spec, "count")
        off = bounds.value(p, spec, "offset")
        if not (isinstance(off, list) and len(off) == 3 and all(s_num(x) for x in off)):
            raise CommandError("%s: offset must be [x, y, z]" % where)
        mod.relative_offset_displace = [float(x) for x in off]
    elif kind == "BEVEL":
        mod.width = s_float(p, spec, "width")
        mod.segments = s_int(p, spec, "segments")
    elif kind == "SOLIDIFY":
        mod.thickness = s_float(p, spec, "thickness")
    elif kind == "MIRROR":
        axis = bounds.value(p, spec, "axis")
        if axis not in ("X", "Y", "Z"):
            raise CommandError("%s: axis must be X, Y or Z" % where)
        mod.use_axis = [axis == "X", axis == "Y", axis == "Z"]
    elif kind == "BOOLEAN":
        mod.object = other
        mod.operation = bounds.value(p, spec, "operation")
        if bounds.value(p, spec, "hide_object") is not False:
            other.hide_render = True
            other.display_type = "WIRE"
    elif kind == "SHRINKWRAP":
        mod.target = other
    elif kind == "SCREW":
        mod.steps = mod.render_steps = s_int(p, spec, "steps")
        mod.angle = s_float(p, spec, "angle")
        mod.screw_offset = s_float(p, spec, "screw_offset")
        mod.axis = bounds.value(p, spec, "axis")
    if kind == "ARRAY" and other is not None:       # copies along the curve: as long as it, bent along it
        mod.fit_type = "FIT_CURVE"
        mod.curve = other
        bend = obj.modifiers.new(name="Curve", type="CURVE")
        bend.object = other


TREE_MAX = 1000     # objects one object.duplicate_tree may copy (a furnished room's recipe holds ~40)


def s_numbered_free(name):
    """The first free "name.NNN" (name cut to fit Blender's 63 bytes), None when all are taken."""
    base = name[:59]
    for i in range(1, 1000):
        candidate = "%s.%03d" % (base, i)
        if candidate not in bpy.data.objects:
            return candidate
    return None


def s_tree_name(name):
    """A free name for a copied part: the composer (scene_instance.c) reserves the same one, so
    the plan's later names never collide with it: `name` when free, else name.001, .002, ..."""
    if bpy.data.objects.get(name) is None:
        return name
    free = s_numbered_free(name)
    if free is None:
        raise CommandError("object.duplicate_tree: no free name left for a copy of %s" % name[:80])
    return free


def s_builtin_duplicate_tree(obj, p, spec):
    """Copy obj and every object under it, keeping the parenting; the copy of obj (returned: the
    step's name names it) stays under obj's parent. linked shares the meshes (and their
    materials). Modifiers that point at an object of the tree (a boolean cutter, an array's
    curve) point at its copy. location / rotation place the copy's root."""
    where = "object.duplicate_tree"
    tree = [obj] + sorted(obj.children_recursive, key=lambda o: o.name)
    if len(tree) > TREE_MAX:
        raise CommandError("%s: %s has %d objects under it; at most %d are copied"
                           % (where, obj.name, len(tree) - 1, TREE_MAX - 1))
    linked = bounds.value(p, spec, "linked")
    linked = True if linked is None else bool(linked)
    loc, rot = bounds.value(p, spec, "location"), bounds.value(p, spec, "rotation")
    loc = s_vec3({"value": loc}, "value", where + " location") if loc is not None else None
    rot = s_vec3({"value": rot}, "value", where + " rotation") if rot is not None else None
    copies = {}
    for i, o in enumerate(tree):
        c = o.copy()
        if not linked and o.data is not None:
            c.data = o.data.copy()
        for coll in o.users_collection or (bpy.context.scene.collection,):
            coll.objects.link(c)
        # a name no plan can give ("~"), until every copy exists: Blender's own "part.001" for one
        # copy must not take the name another copy gets below
        c.name = s_tree_name("~tree%d" % i)
        copies[o] = c
    for o in tree[1:]:              # in name order, as the composer reserves them
        copies[o].name = s_tree_name(o.name)
    copies[obj].name = s_tree_name(obj.name)    # the step's name, if it gives one, replaces it
    for o, c in copies.items():
        if o is not obj and o.parent in copies:
            c.parent = copies[o.parent]         # setting parent resets the inverse: put the original's back
            c.matrix_parent_inverse = o.matrix_parent_inverse.copy()
        for mod in c.modifiers:
            for prop in mod.bl_rna.properties:
                if prop.type == "POINTER" and getattr(prop, "fixed_type", None) is not None \
                        and prop.fixed_type.identifier == "Object" and not prop.is_readonly:
                    other = getattr(mod, prop.identifier, None)
                    if other in copies:
                        setattr(mod, prop.identifier, copies[other])
    root = copies[obj]
    if loc is not None:
        root.location = loc
    if rot is not None:
        root.rotation_mode = "XYZ" if root.rotation_mode in ("QUATERNION", "AXIS_ANGLE") else root.rotation_mode
        root.rotation_euler = rot
    bpy.context.view_layer.update()     # the new objects' bases: later steps find them by name
    s_select_only(root.name)
    return root


KEYABLE = ("location", "rotation_euler", "scale", "hide_render", "hide_viewport", "data.energy", "data.color", "data.lens")


def s_builtin_keyframe(obj, p, spec):
    """Keyframe a property of the object as it is now, at a frame (issue 27)."""
    where = "object.keyframe_insert"
    path, frame, index = bounds.value(p, spec, "data_path"), s_int(p, spec, "frame"), s_int(p, spec, "index")
    if path not in KEYABLE:
        raise CommandError("%s: data_path %s is not keyable here" % (where, str(path)[:60]))
    owner = obj
    if path.startswith("data."):        # a light's or camera's own property: keyed on its data
        owner, path = obj.data, path[len("data."):]
        if owner is None or owner.bl_rna.properties.get(path) is None or isinstance(owner, bpy.types.Mesh):
            raise CommandError("%s: %s (a %s) has no %s" % (where, obj.name, obj.type, path))
    if index >= 0 and not getattr(owner.bl_rna.properties[path], "array_length", 0):
        raise CommandError("%s: %s has no components" % (where, path))
    if not owner.keyframe_insert(data_path=path, index=index, frame=frame):
        raise CommandError("%s: Blender made no keyframe for %s at frame %d" % (where, path, frame))
    interp, extrap = bounds.value(p, spec, "interpolation"), bounds.value(p, spec, "extrapolation")
    action = owner.animation_data.action if owner.animation_data is not None else None
    for fc in compat.action_fcurves(action) if action is not None else ():
        if fc.data_path != path or (index >= 0 and fc.array_index != index):
            continue
        for kp in fc.keyframe_points:
            if abs(kp.co[0] - frame) < 1e-4 and interp:
                kp.interpolation = interp
        if extrap:
            fc.extrapolation = extrap


BUILTINS = {
    "object.parent": s_builtin_parent,
    "object.modifier": s_builtin_modifier,
    "object.material": s_builtin_material,
    "object.rotation": s_builtin_setter("rotation_euler"),
    "object.keyframe_insert": s_builtin_keyframe,
    "object.duplicate_tree": s_builtin_duplicate_tree,
    "asset.import": s_builtin_asset_import,
}
BUILTINS.update(edit_ops.EDIT_BUILTINS)
# Builtins whose target is optional (a model or an HDRI import acts on no object): without one
# they get None, not the active object. A builtin may return the step's object (the imported
# model's root); otherwise it is the target.
TARGET_OPTIONAL = {"asset.import"}


# ---------------------------------------------------------------------------- bpy.ops steps

# Categories whose operators quit, load/save files, touch preferences or run code: never via
# a plan step, whatever the caller validated (defence in depth).
DENIED_CATEGORIES = {"wm", "script", "preferences", "text", "file", "buttons"}


def s_pivot(objs):
    return sum((o.location for o in objs), Vector()) / max(1, len(objs))


def s_fb_translate(objs, p):
    s_only(p, ("value",), "transform.translate")
    v = s_vec3(p, "value", "transform.translate")
    for o in objs:
        o.location += v


def s_rotation_matrix(o):
    if o.rotation_mode == "QUATERNION":
        return o.rotation_quaternion.to_matrix()
    if o.rotation_mode == "AXIS_ANGLE":
        angle, x, y, z = o.rotation_axis_angle
        return Quaternion((x, y, z), angle).to_matrix()
    return o.rotation_euler.to_matrix()


def s_fb_resize(objs, p):
    s_only(p, ("value",), "transform.resize")
    v, pivot = s_vec3(p, "value", "transform.resize"), s_pivot(objs)
    for o in objs:
        # Like the operator: scale along the global axes, keep the rotation, and take each
        # local scale from the length of the scaled local axis (a rotated object cannot
        # take a non-uniform global scale exactly; Blender approximates it the same way).
        rot = s_rotation_matrix(o)
        m = Matrix.Diagonal(v) @ rot @ Matrix.Diagonal(o.scale)
        o.scale = Vector(math.copysign(m.col[i].length, m.col[i].dot(rot.col[i])) for i in range(3))
        o.location = pivot + Vector(a * b for a, b in zip(o.location - pivot, v))


def s_fb_rotate(objs, p):
    s_only(p, ("value", "orient_axis"), "transform.rotate")
    angle, axis = p.get("value"), p.get("orient_axis", "Z")
    if not s_num(angle) or axis not in ("X", "Y", "Z"):
        raise CommandError("transform.rotate: value must be a number, orient_axis X/Y/Z")
    # Blender 3.4's operator turns by -value about the global axis (measured), so do the same.
    q = Quaternion({"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1)}[axis], -angle)
    pivot = s_pivot(objs)
    for o in objs:
        if o.rotation_mode == "QUATERNION":
            o.rotation_quaternion = q @ o.rotation_quaternion
        else:
            o.rotation_euler = (q.to_matrix() @ o.rotation_euler.to_matrix()).to_euler(
                o.rotation_mode if o.rotation_mode != "AXIS_ANGLE" else "XYZ", o.rotation_euler)
        o.location = pivot + q @ (o.location - pivot)


def s_fb_shade(smooth):
    def apply(objs, p):
        s_only(p, (), "object.shade_smooth" if smooth else "object.shade_flat")
        for o in objs:
            if o.type == "MESH":
                o.data.polygons.foreach_set("use_smooth", [smooth] * len(o.data.polygons))
                o.data.update()
    return apply


# Used only when the operator's poll() fails (no 3D view, e.g. a GUI timer context); on
# Blender 3.4.1 in -b they pass, measured. Data-API equivalents on the selected objects.
FALLBACKS = {
    "bpy.ops.transform.translate": s_fb_translate,
    "bpy.ops.transform.resize": s_fb_resize,
    "bpy.ops.transform.rotate": s_fb_rotate,
    "bpy.ops.object.shade_smooth": s_fb_shade(True),
    "bpy.ops.object.shade_flat": s_fb_shade(False),
}


OPERATORS = {}      # operation name -> the bpy.ops function, looked up (and its RNA checked) once


def s_operator(operation):
    fn = OPERATORS.get(operation)
    if fn is not None:
        return fn
    _bpy, _ops, category, name = operation.split(".")
    if category in DENIED_CATEGORIES:
        raise CommandError("operator %s is not allowed" % operation)
    try:
        fn = getattr(getattr(bpy.ops, category), name)
        fn.get_rna_type()
    except (AttributeError, KeyError):
        raise CommandError("unknown operator %s" % operation)
    OPERATORS[operation] = fn
    return fn


def s_run_operator(operation, params):
    fn = s_operator(operation)
    kwargs = {k: s_tuples(v) for k, v in params.items()}
    # The call checks poll() itself (a RuntimeError when it fails): no second poll per step.
    try:
        with CAPTURE:
            result = fn(**kwargs)
    except RuntimeError as e:
        if "poll() failed" not in str(e):
            raise CommandError("%s: %s" % (operation, str(e).strip()[:1000]))
        fallback = FALLBACKS.get(operation)
        if fallback is None:
            raise CommandError("%s cannot run here: poll() failed (context is incorrect)" % operation)
        fallback(compat.selected_objects(bpy.context.view_layer), params)
        return
    if result != {"FINISHED"}:
        reports = CAPTURE.text[:1000]
        raise CommandError("%s returned %s%s" % (operation, "/".join(sorted(result)),
                                                 ": " + reports if reports else ""))


# ---------------------------------------------------------------------------- the command

def s_free_name(name, obj):
    """The name a new object gets: `name` when no other object holds it, else the first free
    "name.NNN". Never Blender's own renaming: Blender 3.4, asked to give a second sphere the
    name of the first, renames the FIRST one to "name.001" (a plan would rename objects it
    never touched; a cone keeps its name, a sphere does not)."""
    held = bpy.data.objects.get(name)
    if held is None or held == obj:
        return name
    return s_numbered_free(name) or name


def cmd_run_step(args):
    step = args.get("step")
    if not isinstance(step, dict):
        raise CommandError("run_step: args.step must be an object")
    operation, params = step.get("operation"), step.get("params") or {}
    name, target = step.get("name"), step.get("target")
    if not isinstance(operation, str):
        raise CommandError("run_step: operation must be a string")
    allowed = bounds.allowed()
    # a property path (object.location.z.add, object.active.scale, scene.frame_end): its
    # template must be in the palette; resolve raises when it is not, or when it is refused
    path = prop_paths.resolve(operation, allowed, bounds.s_Palette.bounds) \
        if operation not in BUILTINS and isinstance(operation, str) else None
    if path is not None:
        return s_run_path(path, step, params, name, target)
    if allowed is not None and operation not in allowed:
        raise CommandError("run_step refused: %s is not in the palette's operation list%s"
                           % (operation[:120], "" if allowed else " (the client sent none at hello)"))
    if not isinstance(params, dict):
        raise CommandError("run_step: params must be an object")
    if operation not in BUILTINS and not OP_RE.match(operation):
        raise CommandError("unknown operation %s" % operation[:120])
    spec = bounds.check_step(operation, params, operation in BUILTINS)
    if name is not None and not (isinstance(name, str) and name):
        raise CommandError("run_step: name must be a non-empty string")
    if target is not None and not isinstance(target, str):
        raise CommandError("run_step: target must be a string")
    if TXN.current is not None:
        TXN.current.touch_for_step(target)
    objects = bpy.data.objects
    txn = TXN.current
    # The names before the step: inside a plan, those the previous step left (kept on the
    # transaction), unless the count says something else changed the scene meanwhile.
    before = txn.known if txn is not None and txn.known is not None and len(txn.known) == len(objects) \
        else set(objects.keys())
    count = len(objects)
    obj = None
    edit = edit_ops.is_edit_step(operation)
    if edit:
        edit_ops.enter_edit(target)
    elif operation != "bpy.ops.object.mode_set":
        s_ensure_object_mode()
    if operation in BUILTINS:
        obj = s_target_object(target) if target is not None or operation not in TARGET_OPTIONAL else None
        made = BUILTINS[operation](obj, params, spec)
        obj = made if made is not None else obj
    elif OP_RE.match(operation):
        if target is not None and not edit:
            s_select_only(target)
        s_run_operator(operation, params)
    else:
        raise CommandError("unknown operation %s" % operation[:120])
    # counts first: most steps create nothing, and the names are compared only when they might
    # (no palette operation both removes and adds objects)
    created = [] if len(objects) == count else sorted(set(objects.keys()) - before)
    if obj is None and operation not in BUILTINS:
        active = bpy.context.view_layer.objects.active
        if created and not (active is not None and active.name in created):
            active = bpy.data.objects.get(created[0])
        obj = active
    if name is not None and obj is not None:
        old = obj.name
        obj.name = s_free_name(name, obj)   # report what it really is ("name.001" when taken)
        if old in created:
            created[created.index(old)] = obj.name
    if txn is not None:
        txn.steps_run += 1
        txn.known = before if len(objects) == count and name is None else set(objects.keys())
    return {"objects_created": created, "object": obj.name if obj is not None else None}, None


def s_run_path(path, step, params, name, target):
    """A property path step: checked against the palette's template and Blender's RNA, then set."""
    if name is not None:
        raise CommandError("run_step: a property path creates no object, so it takes no name")
    if not isinstance(params, dict):
        raise CommandError("run_step: params must be an object")
    txn = TXN.current
    obj = None
    if path["root"] == "object":
        s_ensure_object_mode()
        if txn is not None:
            txn.touch_for_step(target)
        obj = s_target_object(target)
    elif target is not None:
        raise CommandError("%s acts on the scene and takes no target" % path["template"])
    prop_paths.run(path, obj, params)
    if txn is not None:
        txn.steps_run += 1
    return {"objects_created": [], "object": obj.name if obj is not None else None}, None
