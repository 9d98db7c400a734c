"""rna — operator descriptions from Blender's RNA (rna_info), for the validator's palette and
inspect_tool. Read-only: nothing is run."""
import math
import re
import struct

import bpy

from . import prop_paths
from .args import CommandError, s_num
from .steps import BUILTINS, OP_RE


def s_f32(v):
    """The shortest decimal that reads back as the same float32: RNA stores floats in single
    precision, so 0.001 comes out as 0.0010000000474974513; report 0.001."""
    if not (isinstance(v, float) and math.isfinite(v)):
        return v if s_num(v) else None
    try:
        want = struct.unpack("f", struct.pack("f", v))[0]
        for digits in range(6, 10):
            short = float("%.*g" % (digits, v))
            if struct.unpack("f", struct.pack("f", short))[0] == want:
                return short
    except (OverflowError, struct.error):
        pass
    return v


def s_rna_value(v):
    if isinstance(v, float):
        return s_f32(v)
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    if isinstance(v, (set, frozenset)):
        return sorted(v)
    try:
        return [s_rna_value(x) for x in v]
    except TypeError:
        return str(v)


def s_rna_param(p):
    out = {"identifier": p.identifier, "name": p.name, "type": p.type, "subtype": p.subtype,
           "description": p.description, "hidden": bool(p.is_hidden),
           "required": bool(p.is_required)}
    if p.type in ("FLOAT", "INT", "BOOLEAN"):
        out["array_length"] = p.array_length
        out["default"] = s_rna_value(p.default_array if p.array_length else p.default)
    if p.type in ("FLOAT", "INT"):
        for key, attr in (("min", "hard_min"), ("max", "hard_max"),
                          ("soft_min", "soft_min"), ("soft_max", "soft_max")):
            out[key] = s_rna_value(getattr(p, attr))
    if p.type == "ENUM":
        out["enum_flag"] = bool(p.is_enum_flag)
        out["default"] = sorted(p.default_flag) if p.is_enum_flag else p.default
        # Items computed from context (dynamic enums) come back empty here.
        out["enum_items"] = [{"identifier": i.identifier, "name": i.name, "description": i.description}
                             for i in p.enum_items]
    if p.type == "STRING":
        out["default"] = p.default
        out["max_len"] = p.length_max
    return out


PROP_RE = re.compile(r"^bpy\.types\.([A-Z][A-Za-z0-9_]{0,63})\.([a-z_][a-z0-9_]{0,63})$")


def s_rna_property(name):
    """A property path's last property (issue 27), asked as bpy.types.Struct.prop: answered like an
    operator with one parameter, "value", plus readonly."""
    m = PROP_RE.match(name)
    if m is None:
        raise CommandError("unknown property %s: expected bpy.types.Struct.property" % name[:120])
    why = prop_paths.s_denied(m.group(2))
    if why:
        raise CommandError("property %s refused: %s" % (name[:120], why))
    struct = getattr(bpy.types, m.group(1), None)
    rna = getattr(struct, "bl_rna", None)
    prop = rna.properties.get(m.group(2)) if rna is not None and not m.group(1).startswith("_") else None
    if prop is None:
        raise CommandError("unknown property %s: Blender %s has no such property"
                           % (name, bpy.app.version_string.split(" ")[0]))
    param = s_rna_param(prop)
    param["identifier"] = "value"
    return {"name": name, "identifier": rna.identifier + "." + prop.identifier, "label": prop.name,
            "description": prop.description, "blender": bpy.app.version_string.split(" ")[0],
            "readonly": bool(prop.is_readonly), "params": [param]}


def s_is_operator(full):
    """Is `full` (bpy.ops.CATEGORY.NAME) an operator this Blender has?"""
    if not OP_RE.match(full):
        return False
    _bpy, _ops, category, name = full.split(".")
    try:
        getattr(getattr(bpy.ops, category), name).get_rna_type()
    except (AttributeError, KeyError, RuntimeError):
        return False
    return True


def cmd_rna_info(args):
    """One operator's description from Blender's RNA: bpy.ops.X.Y.get_rna_type() (3.4 has no
    bpy.types.X_OT_y for most operators). Read-only: nothing is run."""
    operation = args.get("operation")
    if not isinstance(operation, str) or not operation or len(operation) > 200:
        raise CommandError("rna_info: operation must be a name like bpy.ops.mesh.primitive_cube_add")
    if operation.startswith("bpy.types."):
        return s_rna_property(operation), None
    if (operation.startswith("object.") or operation.startswith("scene.")) and operation not in BUILTINS \
            and not s_is_operator("bpy.ops." + operation):    # "object.modifier_add": bpy.ops. may be left out
        raise CommandError("%s is a property path (set by the add-on on Blender's RNA), not an operator: its value's"
                           " type and bounds are in the capability palette" % operation[:120])
    if operation in BUILTINS:
        raise CommandError("%s is a blendmq builtin step (run by the add-on), not a Blender operator: it has"
                           " no RNA; its parameters are in the capability palette" % operation)
    full = operation if operation.startswith("bpy.ops.") else "bpy.ops." + operation
    if not OP_RE.match(full):
        raise CommandError("unknown operator %s: expected bpy.ops.CATEGORY.NAME (lower case)" % operation[:120])
    _bpy, _ops, category, name = full.split(".")
    try:
        rna = getattr(getattr(bpy.ops, category), name).get_rna_type()
    except (AttributeError, KeyError):
        raise CommandError("unknown operator %s: Blender %s has no such operator"
                           % (full, bpy.app.version_string.split(" ")[0]))
    return {"name": full, "identifier": rna.identifier, "label": rna.name,
            "description": rna.description,
            "blender": bpy.app.version_string.split(" ")[0],
            "params": [s_rna_param(p) for p in rna.properties if p.identifier != "rna_type"]}, None
