"""prop_paths — property paths as the seeds write them (issue 27):

    object[.active].<path>[.<component>][.<verb>]      scene.<path>[.<component>][.<verb>]

The palette's path templates (operations with `path: true`, e.g. object.location,
object.data.energy, object.modifiers[].width, scene.render.resolution_x) reach the add-on in
hello's names and bounds like any operation. A step's operation is parsed here the way the
validator parses it (common/palette/palette_path.c; the rules are in palette.h): the template
must be one the client named, the value must fit the form (set: the template's bounds; add:
within +-(max-min); mul: within +-MUL_MAX), and then the path is walked on Blender's live RNA,
segment by segment: every segment an RNA property of the struct it is on, nothing denied
(files, code, drivers, handlers, RNA internals, '_' names), no ID from a library; the last one
writable, of the template's type and length, within its hard limits and (enum) items. add and
mul are applied only when the result stays within the template's bounds.

Rollback needs nothing here: every property a path reaches lives in bpy.data, which the plan's
snapshot restores exactly (transaction.py)."""
import math
import re

import bpy

from .args import CommandError, s_num

MUL_MAX = 1000.0        # BMQ_PALETTE_PATH_MUL_MAX
PATH_MAX = 200
DENIED = frozenset((
    "filepath", "filepath_raw", "filepath_python", "directory", "filename", "library", "library_weak_reference",
    "override_library", "bl_rna", "rna_type", "id_data", "driver", "drivers", "driver_add", "driver_remove",
    "handlers", "animation_data", "animation_data_create", "script", "scripts", "text", "texts", "python",
    "original", "evaluated_get", "users", "use_fake_user", "session_uid", "asset_data", "preview",
    "node_tree", "use_autopack", "is_dirty", "use_scripts_auto_execute", "keying_sets", "view_layers"))
SEG_RE = re.compile(r"[a-z_][a-z0-9_]*|[0-9]")
KEY_RE = re.compile(r'"([A-Za-z0-9_][A-Za-z0-9_. -]{0,62})"|\'([A-Za-z0-9_][A-Za-z0-9_. -]{0,62})\'|([0-9]{1,3})')
COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3, "0": 0, "1": 1, "2": 2, "3": 3}
VERBS = ("set", "add", "mul")


def s_denied(seg):
    if seg.startswith("_") or "__" in seg:
        return "a name starting with '_' or holding '__' (Python and RNA internals)"
    if seg in DENIED:
        return "a property that reaches files, code, drivers, handlers or Blender's RNA internals"
    if "filepath" in seg:
        return "a file path"
    return None


def parse(operation):
    """(template, [(segment, key or None)], component or None, verb, active) for an operation
    that starts with object. or scene.; None when it does not; CommandError when it is refused."""
    if not isinstance(operation, str) or not (operation.startswith("object.") or operation.startswith("scene.")):
        return None
    if len(operation) > PATH_MAX:
        raise CommandError("a property path is at most %d bytes" % PATH_MAX)
    root, rest = operation.split(".", 1)
    active = False
    if root == "object" and rest.startswith("active."):
        active, rest = True, rest[len("active."):]
    segs, i = [], 0
    while i < len(rest):
        m = SEG_RE.match(rest, i)
        if m is None:
            raise CommandError("property path %s is not object[.active].<path>[.x|y|z|w][.set|add|mul]" % operation[:80])
        seg = m.group(0)
        why = s_denied(seg)
        if why:
            raise CommandError("property path refused at '%s': %s" % (seg[:40], why))
        i = m.end()
        key = None
        if i < len(rest) and rest[i] == "[":
            close = rest.find("]", i)
            km = KEY_RE.fullmatch(rest, i + 1, close) if close > 0 else None
            if km is None:
                raise CommandError("a subscript is [\"Name\"] or [N] (0..999)")
            key = km.group(1) or km.group(2) or int(km.group(3))
            i = close + 1
        segs.append((seg, key))
        if i < len(rest):
            if rest[i] != "." or i + 1 == len(rest):
                raise CommandError("property path %s is not object[.active].<path>[.x|y|z|w][.set|add|mul]"
                                   % operation[:80])
            i += 1
    verb, component = "set", None
    if len(segs) > 1 and segs[-1][0] in VERBS and segs[-1][1] is None:
        verb = segs.pop()[0]
    return root, segs, verb, active


def s_template(root, segs):
    return root + "." + ".".join(s + ("[]" if k is not None else "") for s, k in segs)


def resolve(operation, allowed, bounds):
    """The step's path: {template, segs, component, verb, active, spec} where spec is the
    template's bounds for value; CommandError when it is not a path of the palette."""
    parsed = parse(operation)
    if parsed is None:
        return None
    root, segs, verb, active = parsed
    component = None
    tmpl = s_template(root, segs) if segs else None
    if tmpl is None or tmpl not in (bounds or {}):
        if len(segs) > 1 and segs[-1][1] is None and segs[-1][0] in COMPONENTS:
            component = COMPONENTS[segs[-1][0]]
            segs = segs[:-1]
            tmpl = s_template(root, segs)
    if tmpl is None or not bounds or tmpl not in bounds or "value" not in bounds[tmpl] \
            or (allowed is not None and tmpl not in allowed):
        raise CommandError("run_step refused: property path %s is not in the palette" % str(tmpl or operation)[:120])
    spec = bounds[tmpl]["value"]
    kind = spec.get("type")
    if component is not None and not ((kind == "vec3" and component < 3) or (kind == "color" and component < 4)):
        raise CommandError("%s has no component %d" % (tmpl, component))
    if verb != "set" and kind not in ("float", "int", "vec3", "color"):
        raise CommandError("%s is a %s: only set applies" % (tmpl, kind))
    return {"template": tmpl, "root": root, "segs": segs, "component": component, "verb": verb,
            "active": active, "spec": spec}


# ---------------------------------------------------------------------------- values

def s_bounds(spec):
    if spec.get("type") == "color":
        return float(spec.get("min", 0.0)), float(spec.get("max", 1.0))
    return float(spec.get("min", -math.inf)), float(spec.get("max", math.inf))


def s_check_value(path, value):
    """The value fits the form (restating the validator's derived bounds)."""
    spec, verb, comp = path["spec"], path["verb"], path["component"]
    kind = spec["type"]
    lo, hi = s_bounds(spec)
    where = path["template"]
    if kind in ("bool", "enum", "string") or (verb == "set" and comp is None):
        from .bounds import s_fits
        wrong = s_fits(spec, value)
        if wrong:
            raise CommandError("%s: value must be %s" % (where, wrong))
        return
    if verb == "add":
        lo, hi = -(hi - lo), hi - lo
    elif verb == "mul":
        lo, hi = -MUL_MAX, MUL_MAX
    if comp is not None or kind in ("float", "int"):
        if kind == "int" and verb != "mul":
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = s_num(value)
        if not (ok and lo <= value <= hi):
            raise CommandError("%s.%s: value must be a%s number in %g..%g" % (where, verb, "n integer" if kind == "int" and verb != "mul" else "", lo, hi))
        return
    n = (3,) if kind == "vec3" else (3, 4)
    if not (isinstance(value, list) and len(value) in n and all(s_num(x) and lo <= x <= hi for x in value)):
        raise CommandError("%s.%s: value must be a list of %s numbers in %g..%g" % (where, verb, " or ".join(map(str, n)), lo, hi))


# ---------------------------------------------------------------------------- walking the RNA

def s_rna_prop(owner, seg):
    rna = getattr(owner, "bl_rna", None)
    prop = rna.properties.get(seg) if rna is not None else None
    if prop is None:
        raise CommandError("%s has no property %s" % (getattr(rna, "identifier", type(owner).__name__), seg))
    return prop


def s_check_id(v, where):
    if isinstance(v, bpy.types.ID) and (v.library is not None or getattr(v, "override_library", None) is not None):
        raise CommandError("%s: %s comes from a library file and is not changed" % (where, v.name[:60]))


def s_walk(root_obj, path):
    """(owner, final rna property) after walking every segment but the last's value."""
    cur = root_obj
    segs = path["segs"]
    where = path["template"]
    for n, (seg, key) in enumerate(segs):
        prop = s_rna_prop(cur, seg)
        last = n == len(segs) - 1
        if last and key is None:
            return cur, prop
        if prop.type not in ("POINTER", "COLLECTION"):
            raise CommandError("%s: %s is not a struct or a collection" % (where, seg))
        if (prop.type == "COLLECTION") != (key is not None):
            raise CommandError("%s: %s %s" % (where, seg, "needs [\"Name\"] or [N]" if key is None else "takes no subscript"))
        val = getattr(cur, seg)
        if key is not None:
            try:
                val = val[key]
            except (KeyError, IndexError, TypeError):
                raise CommandError("%s: %s has no item %r" % (where, seg, key))
            if last:
                raise CommandError("%s: a path ends on a property, not an item" % where)
        if val is None and n == 0 and path["root"] == "scene" and seg == "world":
            val = root_obj.world = bpy.data.worlds.new("World")     # an empty scene has none yet
        if val is None:
            raise CommandError("%s: %s is empty on %s" % (where, seg, getattr(root_obj, "name", "the scene")))
        s_check_id(val, where)
        cur = val
    raise CommandError("%s: empty path" % where)


def s_new_value(path, prop, owner):
    seg = path["segs"][-1][0]
    spec, verb, comp, value = path["spec"], path["verb"], path["component"], path["value"]
    kind = spec["type"]
    where = path["template"]
    if prop.is_readonly:
        raise CommandError("%s is read-only in Blender" % where)
    rtype, alen = prop.type, getattr(prop, "array_length", 0)
    want = {"float": ("FLOAT", 0), "int": ("INT", 0), "bool": ("BOOLEAN", 0), "enum": ("ENUM", 0),
            "string": ("STRING", 0), "vec3": ("FLOAT", 3), "color": ("FLOAT", None)}[kind]
    if rtype != want[0] or (want[1] is not None and alen != want[1]) or (kind == "color" and alen not in (3, 4)) \
            or (kind == "enum" and prop.is_enum_flag):
        raise CommandError("%s is %s[%d] in Blender, not a %s" % (where, rtype, alen, kind))
    if kind == "enum":
        items = [i.identifier for i in prop.enum_items]
        if value not in items:
            raise CommandError("%s: %s is not one of Blender's items (%s)" % (where, value, ", ".join(items)[:200]))
        return value
    if kind == "string":
        if prop.length_max and len(value.encode("utf-8")) >= prop.length_max:
            raise CommandError("%s: at most %d bytes" % (where, prop.length_max - 1))
        return value
    if kind == "bool":
        return bool(value)
    cur = getattr(owner, seg)
    lo, hi = s_bounds(spec)
    lo, hi = max(lo, prop.hard_min), min(hi, prop.hard_max)
    if alen:
        cur = [float(x) for x in cur]
        if kind == "color" and comp is None and len(value) != alen:
            value = list(value)[:alen] + [1.0] * (alen - len(value))
        if comp is not None:
            if comp >= alen:
                raise CommandError("%s has %d components" % (where, alen))
            new = list(cur)
            new[comp] = s_apply(verb, cur[comp], value)
        else:
            new = [s_apply(verb, c, v) for c, v in zip(cur, value)]
        for x in new:
            if not (math.isfinite(x) and lo <= x <= hi):
                raise CommandError("%s.%s would make %g, outside %g..%g" % (where, verb, x, lo, hi))
        return new
    new = s_apply(verb, cur, value)
    if kind == "int":
        new = int(round(new))
    if not (math.isfinite(new) and lo <= new <= hi):
        raise CommandError("%s.%s would make %g, outside %g..%g" % (where, verb, new, lo, hi))
    return new


def s_apply(verb, cur, v):
    return v if verb == "set" else cur + v if verb == "add" else cur * v


def run(path, obj, params):
    """Apply a resolved path to obj (object paths) or the scene. Returns what it set."""
    if set(params) - {"value"}:
        raise CommandError("%s: unknown parameter %s (allowed: value)" % (path["template"], sorted(set(params) - {"value"})[0][:40]))
    if "value" not in params:
        raise CommandError("%s: value is required" % path["template"])
    path = dict(path, value=params["value"])
    s_check_value(path, path["value"])
    root = obj if path["root"] == "object" else bpy.context.scene
    if root is None:
        raise CommandError("%s: no object" % path["template"])
    s_check_id(root, path["template"])
    owner, prop = s_walk(root, path)
    new = s_new_value(path, prop, owner)
    setattr(owner, path["segs"][-1][0], new)
    return new
