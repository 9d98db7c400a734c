"""bounds — the palette the connected client sent at hello, and the check of one run_step's
parameters against it.

The executor sends the palette's operation names and each operation's parameter bounds
(proto/palette.yaml, as the validator loads it; the hello's `bounds`, declared in
proto/blender_link.json): {operation: {param: {type, required?, default?, min?, max?,
max_len?, items?}}}. run_step refuses an operation not in the names, and a step whose
parameters do not fit its bounds, as defence in depth behind the validator: a step that
reached Blender some other way still cannot freeze it. The builtins (steps.py) take their
defaults from the same bounds, so the add-on codes no bound of its own.

Fail closed: a hello without bounds (an executor older than this add-on) leaves every step
that has parameters, and every builtin, refused with a message saying so. With no link server
in this process (direct calls: tests/planner's harness through blendmq_addon.py) the names are
None (no filter) and the bounds are whatever load_palette_file() found.
"""
import math

from . import link_proto
from .args import CommandError


class s_Palette:
    names = None        # frozenset of operation names, or None: no link server in this process
    bounds = None       # {operation: {param: spec}}, or None: none received


def set_palette(names, bounds=None):
    """What hello carried (names: an iterable of operation names, or None for "no filter";
    bounds: checked with check_bounds first, or None)."""
    s_Palette.names = frozenset(names) if names is not None else None
    s_Palette.bounds = bounds


def allowed():
    return s_Palette.names


def s_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_bounds(bounds):
    """None when hello's `bounds` has the declared shape; otherwise why not (the hello is then
    refused: an executor that sends malformed bounds is not one to run steps for)."""
    if not isinstance(bounds, dict) or len(bounds) > link_proto.HELLO_ARGS["bounds"]["max_items"]:
        return "bounds must be an object of at most %d operations" % link_proto.HELLO_ARGS["bounds"]["max_items"]
    for op, params in bounds.items():
        if not isinstance(params, dict) or len(params) > link_proto.BOUNDS_MAX_PARAMS:
            return "bounds of %s must be an object of at most %d parameters" % (op[:80], link_proto.BOUNDS_MAX_PARAMS)
        for name, spec in params.items():
            where = "bounds of %s.%s" % (op[:80], str(name)[:40])
            if not isinstance(spec, dict) or spec.get("type") not in link_proto.BOUNDS_TYPES:
                return "%s: type must be one of %s" % (where, ", ".join(link_proto.BOUNDS_TYPES))
            extra = set(spec) - set(link_proto.BOUNDS_PARAM_KEYS)
            if extra:
                return "%s: unknown key %s" % (where, sorted(extra)[0][:40])
            for key in ("min", "max"):
                if key in spec and not s_number(spec[key]):
                    return "%s: %s must be a number" % (where, key)
            if "max_len" in spec and not (isinstance(spec["max_len"], int) and spec["max_len"] >= 0):
                return "%s: max_len must be a non-negative integer" % where
            items = spec.get("items")
            if spec["type"] == "enum" and not (isinstance(items, list) and 0 < len(items) <= link_proto.BOUNDS_MAX_ITEMS
                                               and all(isinstance(i, str) for i in items)):
                return "%s: an enum needs at most %d items (strings)" % (where, link_proto.BOUNDS_MAX_ITEMS)
    return None


def s_range_text(spec, lo, hi):
    return "%g..%g" % (spec.get("min", lo), spec.get("max", hi))


def s_fits(spec, v):
    """None when the value fits one parameter's bounds, else what it must be."""
    kind = spec["type"]
    lo, hi = spec.get("min", -math.inf), spec.get("max", math.inf)
    if kind == "float":
        return None if s_number(v) and lo <= v <= hi else "a number in %s" % s_range_text(spec, lo, hi)
    if kind == "int":
        ok = isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
        return None if ok else "an integer in %s" % s_range_text(spec, lo, hi)
    if kind == "bool":
        return None if isinstance(v, bool) else "true or false"
    if kind == "string":
        size = spec.get("max_len", 0)
        ok = isinstance(v, str) and ("max_len" not in spec or len(v.encode("utf-8")) <= size)
        return None if ok else "a string" + (" of at most %d bytes" % size if "max_len" in spec else "")
    if kind == "enum":
        return None if isinstance(v, str) and v in spec.get("items", ()) else "one of " + ", ".join(spec["items"])
    if kind == "vec3":
        ok = isinstance(v, list) and len(v) == 3 and all(s_number(x) and lo <= x <= hi for x in v)
        return None if ok else "[x, y, z], each in %s" % s_range_text(spec, lo, hi)
    if kind == "color":
        lo, hi = spec.get("min", 0.0), spec.get("max", 1.0)
        ok = isinstance(v, list) and len(v) in (3, 4) and all(s_number(x) and lo <= x <= hi for x in v)
        return None if ok else "[r, g, b] or [r, g, b, a], each in %s" % s_range_text(spec, lo, hi)
    return "of a type this add-on does not know (%s)" % kind


def check_step(operation, params, builtin):
    """The bounds of `operation` ({param: spec}) once `params` fit them; raises CommandError
    otherwise, and when there are no bounds for a step that needs some (it has parameters,
    or it is a builtin: those read their defaults from the bounds)."""
    table = s_Palette.bounds
    spec = table.get(operation) if table is not None else None
    if spec is None:
        if params or builtin:
            why = ("the client sent no parameter bounds at hello (an executor older than this add-on?)"
                   if table is None else "the bounds the client sent at hello have no entry for it")
            if s_Palette.names is None and table is None:
                why = "no palette bounds are loaded in this process"
            raise CommandError("run_step refused: %s: %s; a step with parameters does not run unchecked"
                               % (operation[:120], why))
        return {}
    for key in params:
        if key not in spec:
            raise CommandError("%s: unknown parameter %s (allowed: %s)"
                               % (operation[:120], str(key)[:60], ", ".join(sorted(spec)) or "none"))
    for key, p in spec.items():
        v = params.get(key)
        if v is None:
            if p.get("required"):
                raise CommandError("%s: %s is required" % (operation[:120], key))
            continue
        wrong = s_fits(p, v)
        if wrong:
            raise CommandError("%s: %s must be %s" % (operation[:120], key, wrong))
    return spec


def value(params, spec, key):
    """The parameter as given, else the default its bounds declare (None when neither)."""
    v = params.get(key)
    return v if v is not None else spec.get(key, {}).get("default")


def load_palette_file(path):
    """Direct calls only (no link server, so no hello): the bounds from a palette file, read
    with PyYAML when this Python has it. True when loaded; False leaves bounded steps refused."""
    try:
        import yaml
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (ImportError, OSError, ValueError) as e:
        from .log import log
        log("no palette bounds for direct calls (%s: %s): bounded steps are refused" % (type(e).__name__, e))
        return False
    except Exception as e:          # a YAML error: same, never a crash at import
        from .log import log
        log("no palette bounds for direct calls (%s): bounded steps are refused" % e)
        return False
    ops = doc.get("operations") if isinstance(doc, dict) else None
    if not isinstance(ops, dict):
        return False
    table = {op: {name: {k: v for k, v in (p or {}).items() if k in link_proto.BOUNDS_PARAM_KEYS}
                  for name, p in ((entry or {}).get("params") or {}).items()}
             for op, entry in ops.items()}
    if check_bounds(table) is not None:
        return False
    s_Palette.bounds = table
    return True
