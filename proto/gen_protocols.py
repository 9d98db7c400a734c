#!/usr/bin/python3
"""gen_protocols — the Blender link and the sandbox protocol, declared once (proto/blender_link.json,
proto/sandbox.json), made into the tables both languages use; and the staged asset's names
(proto/assets.json, issue 28) for the executor's assets client and the add-on's asset steps.

  gen_protocols.py --link L.json --sandbox S.json --c-dir DIR     C: DIR/bmq_link_proto.{h,c},
                                                                  DIR/bmq_sandbox_proto.{h,c}
  gen_protocols.py --link L.json --sandbox S.json --python F.py   the Python module (link_proto.py)
  gen_protocols.py --link L.json --sandbox S.json --check F.py    exit 1 when F.py is not what
                                                                  --python would write (stale)
  gen_protocols.py --assets A.json --c-dir DIR | --python F.py | --check F.py
                                  the staged asset's names (proto/assets.json): C DIR/bmq_assets_proto.{h,c}
                                  (the executor's assets client), Python asset_proto.py (the add-on)
  gen_protocols.py --rules R.json --c-dir DIR | --python F.py | --check F.py
                                  the script rules (proto/script_rules.json): C DIR/bmq_script_rules_table.{h,c}
                                  (common/script), Python script_rules.py (the add-on's script_exec.py)

The declarations are checked before anything is written (unknown keys, types, checks or
table names, limits that contradict each other): a typo there would silently change what
either side accepts. Only the standard library is used (Debian's /usr/bin/python3), and the
output depends on nothing but the two files, so a regenerated module compares byte for byte.
"""
import argparse
import json
import os
import sys
import textwrap

ARG_TYPES = {"string": {"min_len", "max_len", "pattern"}, "int": {"min", "max"}, "number": {"min", "max"},
             "bool": set(), "object": {"max_items"}, "enum": {"items"}, "array": {"max_items", "of"}}
ARG_COMMON = {"type", "required", "about"}
COMMAND_KEYS = {"about", "args", "reply", "read_only", "forward", "no_deadline", "blob", "keeps_names"}
COMMAND_FLAGS = ("read_only", "forward", "no_deadline", "blob", "keeps_names")
FIELD_CHECKS = ("report_id", "plan_id", "cid", "count", "text", "names", "object", "array")
REPORT_LIMITS = ("reports_max", "names_max", "name_max_bytes", "text_max_bytes", "id_max_bytes")


class DeclError(Exception):
    pass


def s_need(cond, where, what):
    if not cond:
        raise DeclError("%s: %s" % (where, what))


def s_is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_arg(spec, where):
    s_need(isinstance(spec, dict), where, "an argument spec must be an object")
    kind = spec.get("type")
    s_need(kind in ARG_TYPES, where, "type must be one of %s" % ", ".join(ARG_TYPES))
    extra = set(spec) - ARG_COMMON - ARG_TYPES[kind]
    s_need(not extra, where, "unknown keys %s for type %s" % (sorted(extra), kind))
    s_need(isinstance(spec.get("required", False), bool), where, "required must be true or false")
    for key in ("min_len", "max_len", "max_items"):
        if key in spec:
            s_need(s_is_int(spec[key]) and spec[key] >= 0, where, "%s must be a non-negative integer" % key)
    for key in ("min", "max"):
        if key in spec:
            s_need(s_is_int(spec[key]) or (kind == "number" and isinstance(spec[key], float)), where,
                   "%s must be a number of the argument's type" % key)
    if "min" in spec and "max" in spec:
        s_need(spec["min"] <= spec["max"], where, "min > max")
    if "min_len" in spec and "max_len" in spec:
        s_need(spec["min_len"] <= spec["max_len"], where, "min_len > max_len")
    if "pattern" in spec:
        import re
        s_need(isinstance(spec["pattern"], str), where, "pattern must be a string")
        re.compile(spec["pattern"])
    if kind == "enum":
        items = spec.get("items")
        s_need(isinstance(items, list) and items and all(isinstance(i, str) for i in items), where,
               "an enum needs items (strings)")
    if kind == "array":
        s_need("of" in spec, where, "an array needs `of`, the spec of its items")
        check_arg(spec["of"], where + "[]")


def check_args_decl(args, where):
    s_need(isinstance(args, dict), where, "args must be an object")
    for name, spec in args.items():
        check_arg(spec, "%s.%s" % (where, name))


def check_link(d):
    for key in ("link_version", "frame", "handshake", "hello_report", "commands"):
        s_need(key in d, "blender_link", "missing %s" % key)
    s_need(s_is_int(d["link_version"]) and d["link_version"] > 0, "link_version", "a positive integer")
    for key in ("max_json", "max_blob", "preauth_max_json", "preauth_max_blob"):
        s_need(s_is_int(d["frame"].get(key)) and d["frame"][key] >= 0, "frame." + key, "a non-negative integer")
    s_need(d["frame"]["max_json"] < 1 << 32 and d["frame"]["max_blob"] < 1 << 32, "frame", "limits fit in u32")
    s_need(d["frame"]["preauth_max_json"] <= d["frame"]["max_json"], "frame", "preauth_max_json > max_json")
    hs = d["handshake"]
    for key in ("nonce_bytes", "mac_bytes"):
        s_need(s_is_int(hs.get(key)) and 0 < hs[key] <= 64, "handshake." + key, "1..64")
    for key in ("client_label", "server_label"):
        s_need(isinstance(hs.get(key), str) and hs[key].isascii() and '"' not in hs[key] and "\\" not in hs[key],
               "handshake." + key, "plain ASCII")
    check_args_decl(hs["hello"]["args"], "hello.args")
    ss = hs.get("session")
    s_need(isinstance(ss, dict), "handshake.session", "an object")
    s_need(s_is_int(ss.get("mac_bytes")) and ss["mac_bytes"] == 32, "handshake.session.mac_bytes", "32 (HMAC-SHA256)")
    for key in ("key_label", "client_label", "server_label"):
        s_need(isinstance(ss.get(key), str) and ss[key].isascii() and '"' not in ss[key] and "\\" not in ss[key],
               "handshake.session." + key, "plain ASCII")
    s_need(len({ss["key_label"], ss["client_label"], ss["server_label"], hs["client_label"], hs["server_label"]}) == 5,
           "handshake.session", "every label differs")
    s_need(s_is_int(hs.get("preauth_timeout_ms")) and 100 <= hs["preauth_timeout_ms"] <= 10000,
           "handshake.preauth_timeout_ms", "100..10000")
    s_need(s_is_int(hs.get("max_pending")) and 1 <= hs["max_pending"] <= 64, "handshake.max_pending", "1..64")
    b = hs["bounds"]
    s_need(s_is_int(b.get("max_params")) and s_is_int(b.get("max_items")), "handshake.bounds", "max_params, max_items")
    s_need(isinstance(b.get("param_keys"), list) and "type" in b["param_keys"], "handshake.bounds", "param_keys")
    s_need(isinstance(b.get("types"), list) and b["types"], "handshake.bounds", "types")
    hr = d["hello_report"]
    for key in REPORT_LIMITS:
        s_need(s_is_int(hr["limits"].get(key)) and hr["limits"][key] > 0, "hello_report.limits." + key, "positive")
    tables = hr["tables"]
    s_need("hello" in tables, "hello_report.tables", "needs the hello table")
    for tname, fields in tables.items():
        s_need(tname.isidentifier() and tname.islower(), "hello_report.tables." + tname, "a lower-case identifier")
        seen = set()
        for f in fields:
            where = "hello_report.tables.%s.%s" % (tname, f.get("name"))
            s_need(set(f) <= {"name", "check", "required", "fields"}, where, "unknown keys")
            s_need(isinstance(f.get("name"), str) and f["name"] not in seen, where, "names are unique strings")
            seen.add(f["name"])
            s_need(f.get("check") in FIELD_CHECKS, where, "check must be one of %s" % ", ".join(FIELD_CHECKS))
            nested = f["check"] in ("object", "array")
            s_need(nested == ("fields" in f), where, "object and array checks (only) name their fields table")
            if nested:
                s_need(f["fields"] in tables and f["fields"] != tname, where, "fields names another table")
    for name, c in d["commands"].items():
        where = "commands." + name
        s_need(name.isidentifier() and name.islower(), where, "a lower-case identifier")
        s_need(set(c) <= COMMAND_KEYS, where, "unknown keys %s" % sorted(set(c) - COMMAND_KEYS))
        check_args_decl(c.get("args", {}), where + ".args")
        s_need(isinstance(c.get("reply", []), list), where, "reply is a list of field names")
        for flag in COMMAND_FLAGS:
            s_need(isinstance(c.get(flag, False), bool), where, "%s must be true or false" % flag)
        s_need(not (c.get("read_only") and c.get("no_deadline")), where, "a read-only command settles nothing")
    s_need("hello" not in d["commands"], "commands", "hello is the handshake's, not a command")


def check_sandbox(d):
    for key in ("max_line", "job_max_line", "ready", "job", "result", "verdicts"):
        s_need(key in d, "sandbox", "missing %s" % key)
    s_need(s_is_int(d["max_line"]) and s_is_int(d["job_max_line"]), "sandbox", "line limits are integers")
    check_args_decl(d["ready"], "sandbox.ready")
    check_args_decl(d["job"], "sandbox.job")
    s_need(all(isinstance(f, str) for f in d["result"]), "sandbox.result", "field names")
    for side in ("runner", "pool"):
        s_need(all(isinstance(v, str) for v in d["verdicts"].get(side, [None])), "sandbox.verdicts." + side, "names")
    s_need("ok" in d["verdicts"]["runner"], "sandbox.verdicts.runner", "needs ok")


ASSET_USES = {"base_color": set(), "multiply_base": set(), "socket": {"socket"}, "normal_map": set(),
              "displacement": set()}
ASSET_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_")


def s_plain(v):
    return isinstance(v, str) and v and v.isascii() and v.isprintable() and '"' not in v and "\\" not in v


def check_assets(d):
    s_need(isinstance(d, dict), "assets", "an object")
    extra = set(d) - {"about", "resolutions", "sources", "types", "extensions", "texture_maps"}
    s_need(not extra, "assets", "unknown keys %s" % sorted(extra))
    res = d.get("resolutions")
    s_need(isinstance(res, list) and res and all(s_plain(r) for r in res) and len(set(res)) == len(res),
           "assets.resolutions", "distinct plain strings")
    sources = d.get("sources")
    s_need(isinstance(sources, dict) and sources, "assets.sources", "an object of sources")
    types = d.get("types")
    s_need(isinstance(types, dict) and types, "assets.types", "an object of types")
    ext = d.get("extensions")
    s_need(isinstance(ext, dict), "assets.extensions", "an object: format -> its file extensions")
    formats = set()
    for t, spec in types.items():
        where = "assets.types." + t
        s_need(set(t) <= ASSET_NAME_CHARS and t, where, "a lower-case name")
        s_need(isinstance(spec, dict) and set(spec) == {"formats"}, where, "{formats: [...]}")
        f = spec["formats"]
        s_need(isinstance(f, list) and f and all(s_plain(x) and set(x) <= ASSET_NAME_CHARS for x in f)
               and len(set(f)) == len(f), where + ".formats", "distinct lower-case names, in preference order")
        formats |= set(f)
    for f in formats:
        s_need(isinstance(ext.get(f), list) and ext[f] and all(s_plain(e) and e.startswith(".") for e in ext[f]),
               "assets.extensions." + f, "every format's extensions (\".x\")")
    s_need(set(ext) <= formats, "assets.extensions", "only declared formats")
    for name, spec in sources.items():
        where = "assets.sources." + name
        s_need(set(name) <= ASSET_NAME_CHARS and name, where, "a lower-case name")
        s_need(isinstance(spec, dict) and set(spec) <= {"resolutions", "format", "name"}
               and isinstance(spec.get("resolutions"), bool), where, "{resolutions: bool, format?, name?}")
        s_need(s_plain(spec.get("name", name)), where + ".name", "what people call it (\"Poly Haven\")")
        if "format" in spec:
            s_need(spec["format"] in formats, where + ".format", "a declared format")
    maps = d.get("texture_maps")
    s_need(isinstance(maps, list) and maps, "assets.texture_maps", "a list of maps")
    seen = set()
    for m in maps:
        where = "assets.texture_maps.%s" % (m.get("name") if isinstance(m, dict) else "?")
        s_need(isinstance(m, dict), where, "an object")
        use = m.get("use")
        s_need(use in ASSET_USES, where, "use must be one of %s" % ", ".join(ASSET_USES))
        s_need(set(m) <= {"name", "polyhaven", "required", "use"} | ASSET_USES[use], where,
               "unknown keys %s" % sorted(set(m) - {"name", "polyhaven", "required", "use"} - ASSET_USES[use]))
        s_need(isinstance(m.get("name"), str) and set(m["name"]) <= ASSET_NAME_CHARS and 0 < len(m["name"]) <= 15
               and m["name"] not in seen, where, "a distinct lower-case name of at most 15 characters")
        seen.add(m["name"])
        keys = m.get("polyhaven")
        s_need(isinstance(keys, list) and keys and all(s_plain(k) for k in keys) and len(keys) <= 8,
               where + ".polyhaven", "1..8 file-tree keys")
        s_need(isinstance(m.get("required", False), bool), where, "required must be true or false")
        if use == "socket":
            s_need(s_plain(m.get("socket")), where + ".socket", "a Principled BSDF input's name")
    s_need(maps[0].get("required") and maps[0]["use"] == "base_color", "assets.texture_maps",
           "the first map is the required base colour (a texture bundle's main file)")
    s_need(sum(m["use"] == "base_color" for m in maps) == 1, "assets.texture_maps", "one base_color map")


def python_assets(d):
    types = d["types"]
    maps = [[m["name"], m["use"], m.get("socket"), bool(m.get("required"))] for m in d["texture_maps"]]
    out = ['"""asset_proto — GENERATED by proto/gen_protocols.py from proto/assets.json: do not edit (edit',
           'that and rebuild; ctest assets.proto_fresh fails while this copy is stale). The names the',
           'executor and the add-on must agree on for a staged asset: sources, types, resolutions,',
           'formats (in the order a request without one takes them), extensions, and the texture maps',
           'by their staged names with what the add-on makes of each."""',
           "",
           "RESOLUTIONS = %s" % s_py(d["resolutions"]),
           "SOURCES = %s" % s_py(list(d["sources"])),
           "RESOLUTION_SOURCES = %s" % s_py([n for n, s in d["sources"].items() if s["resolutions"]]),
           "SOURCE_FORMAT = %s" % s_py({n: s["format"] for n, s in d["sources"].items() if "format" in s}),
           "SOURCE_NAMES = %s" % s_py({n: s.get("name", n) for n, s in d["sources"].items()}),
           "FORMATS = %s" % s_py({t: spec["formats"] for t, spec in types.items()}),
           "DEFAULT_FORMAT = %s" % s_py({t: spec["formats"][0] for t, spec in types.items()}),
           "EXTENSIONS = %s" % s_py(d["extensions"]),
           "",
           "# Texture maps in staging order: (staged name, use, Principled BSDF socket or None, required).",
           "TEXTURE_MAPS = %s" % s_py(maps),
           "MAP_NAMES = frozenset(%s)" % s_py([m[0] for m in maps]),
           ""]
    return "\n".join(out)


def c_assets(d):
    types, maps = d["types"], d["texture_maps"]
    h = ["/* bmq_assets_proto — GENERATED by proto/gen_protocols.py from proto/assets.json: do not edit.",
         " * The staged asset's names the executor and the add-on agree on (issue 28): types and their",
         " * formats in the order a request without one takes them, resolutions, and the texture maps",
         " * by their staged names with the Poly Haven file-tree keys each is read from. */",
         "#ifndef BMQ_ASSETS_PROTO_H", "#define BMQ_ASSETS_PROTO_H", "",
         "#include <stdbool.h>", "",
         "#define BMQ_ASSET_RESOLUTIONS_TEXT %s" % s_c_str(", ".join(d["resolutions"])),
         "#define BMQ_ASSET_TYPES_TEXT %s" % s_c_str(", ".join(types)), "",
         "typedef struct {",
         "    const char *name;                   /* the staged file's map */",
         "    const char *const *polyhaven;       /* file-tree keys, NULL-terminated, first found wins */",
         "    bool required;                      /* a texture without it is refused */",
         "} bmq_asset_map_t;", "",
         "/* Every texture map in staging order (the first: the bundle's main file), ending with { NULL }. */",
         "extern const bmq_asset_map_t bmq_asset_maps[];",
         "/* Resolutions, NULL-terminated. */",
         "extern const char *const bmq_asset_resolutions[];", "",
         "/* A type's formats in preference order (NULL-terminated), or NULL for no such type. */",
         "const char *const *bmq_asset_formats (const char *type);",
         "/* The same as text (\"jpg, png, exr\"), \"\" for no such type. */",
         "const char *bmq_asset_formats_text (const char *type);",
         "bool bmq_asset_format_ok (const char *type, const char *format);",
         "bool bmq_asset_resolution_ok (const char *resolution);",
         "/* What people call a source (\"Poly Haven\"); the source itself when it is not declared. */",
         "const char *bmq_asset_source_name (const char *source);", "",
         "#endif", ""]
    c = ["/* bmq_assets_proto — GENERATED by proto/gen_protocols.py from proto/assets.json. */",
         '#include "bmq_assets_proto.h"', "", "#include <string.h>", ""]
    for i, m in enumerate(maps):
        c.append("static const char *const s_map_%d[] = { %s, NULL };" % (i, ", ".join(s_c_str(k) for k in m["polyhaven"])))
    c += ["", "const bmq_asset_map_t bmq_asset_maps[] = {"]
    for i, m in enumerate(maps):
        c.append("    { %s, s_map_%d, %s }," % (s_c_str(m["name"]), i, "true" if m.get("required") else "false"))
    c += ["    { NULL }", "};", "",
          "const char *const bmq_asset_resolutions[] = { %s, NULL };" % ", ".join(s_c_str(r) for r in d["resolutions"]), ""]
    for t, spec in types.items():
        c.append("static const char *const s_formats_%s[] = { %s, NULL };" % (t, ", ".join(s_c_str(f) for f in spec["formats"])))
    c += ["", "static const struct { const char *type; const char *const *formats; const char *text; } s_types[] = {"]
    for t, spec in types.items():
        c.append("    { %s, s_formats_%s, %s }," % (s_c_str(t), t, s_c_str(", ".join(spec["formats"]))))
    c += ["    { NULL }", "};", "",
          "const char *const *bmq_asset_formats (const char *type)", "{",
          "    for (int i = 0; type && s_types[i].type; i++)",
          "        if (!strcmp (s_types[i].type, type)) return s_types[i].formats;",
          "    return NULL;", "}", "",
          "const char *bmq_asset_formats_text (const char *type)", "{",
          "    for (int i = 0; type && s_types[i].type; i++)",
          "        if (!strcmp (s_types[i].type, type)) return s_types[i].text;",
          "    return \"\";", "}", "",
          "bool bmq_asset_format_ok (const char *type, const char *format)", "{",
          "    const char *const *f = bmq_asset_formats (type);",
          "    for (; format && f && *f; f++)",
          "        if (!strcmp (*f, format)) return true;",
          "    return false;", "}", "",
          "bool bmq_asset_resolution_ok (const char *resolution)", "{",
          "    for (const char *const *r = bmq_asset_resolutions; resolution && *r; r++)",
          "        if (!strcmp (*r, resolution)) return true;",
          "    return false;", "}", "",
          "static const struct { const char *source, *name; } s_source_names[] = {"]
    for n, spec in d["sources"].items():
        c.append("    { %s, %s }," % (s_c_str(n), s_c_str(spec.get("name", n))))
    c += ["    { NULL, NULL }", "};", "",
          "const char *bmq_asset_source_name (const char *source)", "{",
          "    for (int i = 0; source && s_source_names[i].source; i++)",
          "        if (!strcmp (s_source_names[i].source, source)) return s_source_names[i].name;",
          "    return source ? source : \"?\";", "}", ""]
    return "\n".join(h), "\n".join(c)


# ---------------------------------------------------------------------------- Python

def s_py(v, indent=0):
    """A Python literal of a JSON value, deterministic (no pprint: its layout changes between
    Python versions, and the committed copy is compared byte for byte)."""
    pad = "    " * (indent + 1)
    if isinstance(v, dict):
        if not v:
            return "{}"
        flat = "{" + ", ".join("%s: %s" % (json.dumps(k), s_py(x, indent)) for k, x in v.items()) + "}"
        if len(flat) + 4 * indent < 96 and "\n" not in flat:
            return flat
        items = ["%s%s: %s," % (pad, json.dumps(k), s_py(x, indent + 1)) for k, x in v.items()]
        return "{\n" + "\n".join(items) + "\n" + "    " * indent + "}"
    if isinstance(v, list):
        flat = "(" + ", ".join(s_py(x, indent) for x in v) + ("," if len(v) == 1 else "") + ")"
        if len(flat) + 4 * indent < 96 and "\n" not in flat:
            return flat
        return "(\n" + "\n".join(pad + s_py(x, indent + 1) + "," for x in v) + "\n" + "    " * indent + ")"
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v)


PY_CHECKER = '''

# ---------------------------------------------------------------------------- argument checks
# The same rules for every declared argument (blender_link.json's "about" lists the types).

def s_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v not in (float("inf"), float("-inf"))


def s_range(spec, unit):
    lo, hi = spec.get("min"), spec.get("max")
    if lo is not None and hi is not None:
        return " in %s..%s" % (lo, hi)
    if lo is not None:
        return " of at least %s" % lo
    if hi is not None:
        return " of at most %s%s" % (hi, unit)
    return ""


def describe(spec):
    """What a value of this argument spec must be, as a phrase ("a string of 1..64 characters")."""
    kind = spec["type"]
    if kind == "string":
        lo, hi = spec.get("min_len"), spec.get("max_len")
        size = (" of %d characters" % hi if lo is not None and lo == hi else
                " of %d..%d characters" % (lo, hi) if lo and hi is not None else
                " of at most %d characters" % hi if hi is not None else "")
        return "a string" + size + (" matching %s" % spec["pattern"] if "pattern" in spec else "")
    if kind == "int":
        return "an integer" + s_range(spec, "")
    if kind == "number":
        return "a number" + s_range(spec, "")
    if kind == "bool":
        return "true or false"
    if kind == "object":
        return "an object" + (" of at most %d keys" % spec["max_items"] if "max_items" in spec else "")
    if kind == "enum":
        return "one of " + ", ".join(spec["items"])
    if kind == "array":
        return "a list of at most %s items, each %s" % (spec.get("max_items", "any number of"), describe(spec["of"]))
    return "of type " + kind


def conforms(spec, v):
    """True when the value v fits the argument spec."""
    kind = spec["type"]
    if kind == "string":
        return (isinstance(v, str) and spec.get("min_len", 0) <= len(v) <= spec.get("max_len", len(v))
                and ("pattern" not in spec or re.fullmatch(spec["pattern"], v) is not None))
    if kind in ("int", "number"):
        if not s_num(v) or (kind == "int" and not isinstance(v, int)):
            return False
        return spec.get("min", v) <= v <= spec.get("max", v)
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "object":
        return isinstance(v, dict) and len(v) <= spec.get("max_items", len(v))
    if kind == "enum":
        return isinstance(v, str) and v in spec["items"]
    if kind == "array":
        return (isinstance(v, list) and len(v) <= spec.get("max_items", len(v))
                and all(conforms(spec["of"], x) for x in v))
    return False


def check_args(spec, args, where):
    """None when the dict `args` fits `spec` ({name: argument spec}); otherwise the error text
    ("<where>: <name> must be ..."). An optional argument sent as null counts as absent;
    arguments the spec does not declare are left alone."""
    if not isinstance(args, dict):
        return "%s: args must be an object" % where
    for name, a in spec.items():
        v = args.get(name)
        if v is None:
            if a.get("required"):
                return "%s: %s is required (%s)" % (where, name, describe(a))
            continue
        if not conforms(a, v):
            return "%s: %s must be %s" % (where, name, describe(a))
    return None
'''


def python_module(link, sandbox):
    cmds = link["commands"]
    flags = {f: sorted(n for n, c in cmds.items() if c.get(f)) for f in COMMAND_FLAGS}
    tables = {name: [[f["name"], f["check"], f.get("fields"), bool(f.get("required"))] for f in fields]
              for name, fields in link["hello_report"]["tables"].items()}
    out = ['"""link_proto — GENERATED by proto/gen_protocols.py from proto/blender_link.json and',
           'proto/sandbox.json: do not edit (edit those and rebuild; ctest txn.link_proto_fresh fails',
           'while this copy is stale). The Blender link (frames, handshake, every command with its',
           'arguments and reply fields, the hello report tables) and the sandbox runner\'s fd-3 protocol;',
           'imported by the add-on (protocol, commands, server, steps) and by sandbox_runner.py, so it',
           'uses nothing but the standard library."""',
           "import re", "",
           "LINK_VERSION = %d" % link["link_version"],
           "MAX_JSON = %d" % link["frame"]["max_json"],
           "MAX_BLOB = %d" % link["frame"]["max_blob"],
           "PREAUTH_MAX_JSON = %d" % link["frame"]["preauth_max_json"],
           "PREAUTH_MAX_BLOB = %d" % link["frame"]["preauth_max_blob"],
           "NONCE_BYTES = %d" % link["handshake"]["nonce_bytes"],
           "MAC_BYTES = %d" % link["handshake"]["mac_bytes"],
           "CLIENT_LABEL = %s" % json.dumps(link["handshake"]["client_label"]),
           "SERVER_LABEL = %s" % json.dumps(link["handshake"]["server_label"]),
           "CHALLENGE_FIELDS = %s" % s_py(link["handshake"]["challenge"]),
           "PREAUTH_TIMEOUT_MS = %d" % link["handshake"]["preauth_timeout_ms"],
           "MAX_PENDING = %d" % link["handshake"]["max_pending"],
           "SESSION_KEY_LABEL = %s" % json.dumps(link["handshake"]["session"]["key_label"]),
           "FRAME_CLIENT_LABEL = %s" % json.dumps(link["handshake"]["session"]["client_label"]),
           "FRAME_SERVER_LABEL = %s" % json.dumps(link["handshake"]["session"]["server_label"]),
           "FRAME_MAC_BYTES = %d" % link["handshake"]["session"]["mac_bytes"],
           "HELLO_ARGS = %s" % s_py(link["handshake"]["hello"]["args"]),
           "HELLO_REPLY_FIELDS = %s" % s_py(link["handshake"]["hello"]["reply"]),
           "BOUNDS_MAX_PARAMS = %d" % link["handshake"]["bounds"]["max_params"],
           "BOUNDS_MAX_ITEMS = %d" % link["handshake"]["bounds"]["max_items"],
           "BOUNDS_PARAM_KEYS = %s" % s_py(link["handshake"]["bounds"]["param_keys"]),
           "BOUNDS_TYPES = %s" % s_py(link["handshake"]["bounds"]["types"]),
           "",
           "# The hello reply's interrupted-plan reports: table → ((field, check, nested table, required), ...)",
           "REPORT_LIMITS = %s" % s_py(link["hello_report"]["limits"]),
           "HELLO_REPORT_TABLES = %s" % s_py(tables),
           "",
           "# Every command: args (name → spec), reply fields, and its flags.",
           "COMMANDS = %s" % s_py({n: {"args": c.get("args", {}), "reply": c.get("reply", []),
                                       **{f: bool(c.get(f)) for f in COMMAND_FLAGS}} for n, c in cmds.items()}),
           "READ_ONLY = frozenset(%s)" % s_py(flags["read_only"]),
           "FORWARD = frozenset(%s)" % s_py(flags["forward"]),
           "NO_DEADLINE = frozenset(%s)" % s_py(flags["no_deadline"]),
           "KEEPS_NAMES = frozenset(%s)" % s_py(flags["keeps_names"]),
           "",
           "# The sandbox runner's fd-3 protocol (proto/sandbox.json).",
           "SANDBOX_MAX_LINE = %d" % sandbox["max_line"],
           "SANDBOX_JOB_MAX_LINE = %d" % sandbox["job_max_line"],
           "SANDBOX_READY = %s" % s_py(sandbox["ready"]),
           "SANDBOX_JOB = %s" % s_py(sandbox["job"]),
           "SANDBOX_RESULT_FIELDS = %s" % s_py(sandbox["result"]),
           "SANDBOX_VERDICTS = %s" % s_py(sandbox["verdicts"]["runner"]),
           "SANDBOX_POOL_VERDICTS = %s" % s_py(sandbox["verdicts"]["pool"]),
           ]
    return "\n".join(out) + "\n" + PY_CHECKER


# ---------------------------------------------------------------------------- C

def s_c_str(s):
    return json.dumps(s)        # ASCII-only JSON strings are valid C string literals


def c_link(link):
    cmds, hr = link["commands"], link["hello_report"]
    forward = [n for n, c in cmds.items() if c.get("forward")]
    h = ["/* bmq_link_proto — GENERATED by proto/gen_protocols.py from proto/blender_link.json: do not",
         " * edit. The Blender link's constants, its commands and their flags, and the hello report's",
         " * field tables (blender_link.c checks each field with the check its table names). */",
         "#ifndef BMQ_LINK_PROTO_H", "#define BMQ_LINK_PROTO_H", "",
         "#include <stdbool.h>", "#include <stddef.h>", "",
         "#define BMQ_LINK_VERSION %d" % link["link_version"],
         "#define BMQ_LINK_MAX_JSON %du" % link["frame"]["max_json"],
         "#define BMQ_LINK_MAX_BLOB %du" % link["frame"]["max_blob"],
         "#define BMQ_LINK_PREAUTH_MAX_JSON %du" % link["frame"]["preauth_max_json"],
         "#define BMQ_LINK_NONCE_BYTES %d" % link["handshake"]["nonce_bytes"],
         "#define BMQ_LINK_MAC_BYTES %d" % link["handshake"]["mac_bytes"],
         "#define BMQ_LINK_CLIENT_LABEL %s" % s_c_str(link["handshake"]["client_label"]),
         "#define BMQ_LINK_SERVER_LABEL %s" % s_c_str(link["handshake"]["server_label"]),
         "#define BMQ_LINK_PREAUTH_TIMEOUT_MS %d" % link["handshake"]["preauth_timeout_ms"],
         "#define BMQ_LINK_SESSION_KEY_LABEL %s" % s_c_str(link["handshake"]["session"]["key_label"]),
         "#define BMQ_LINK_FRAME_CLIENT_LABEL %s" % s_c_str(link["handshake"]["session"]["client_label"]),
         "#define BMQ_LINK_FRAME_SERVER_LABEL %s" % s_c_str(link["handshake"]["session"]["server_label"]),
         "#define BMQ_LINK_FRAME_MAC_BYTES %d" % link["handshake"]["session"]["mac_bytes"],
         "#define BMQ_LINK_HELLO_MAX_OPERATIONS %d" % link["handshake"]["hello"]["args"]["operations"]["max_items"],
         "#define BMQ_LINK_BOUNDS_MAX_PARAMS %d" % link["handshake"]["bounds"]["max_params"]]
    h += ["#define BMQ_LINK_%s %d" % (k.upper(), hr["limits"][k]) for k in REPORT_LIMITS]
    h += ["",
          "/* Commands a client may have forwarded through the executor (scene.request), for messages. */",
          "#define BMQ_LINK_FORWARD_TEXT %s" % s_c_str(", ".join(forward)), "",
          "typedef struct {",
          "    const char *name;",
          "    bool read_only;      /* changes nothing in the scene */",
          "    bool forward;        /* a client may ask for it through the executor */",
          "    bool no_deadline;    /* ends or settles a transaction: never skipped for a passed deadline */",
          "    bool blob;           /* the reply carries a blob */",
          "    bool keeps_names;    /* never adds, removes or renames objects (the scene's names stay) */",
          "} bmq_link_command_t;", "",
          "/* Every declared command, ending with { NULL }. */",
          "extern const bmq_link_command_t bmq_link_commands[];",
          "/* The declared command of this name, or NULL. */",
          "const bmq_link_command_t *bmq_link_command (const char *name);", "",
          "typedef enum {"]
    h += ["    BMQ_LINK_CHECK_%s," % c.upper() for c in FIELD_CHECKS]
    h += ["} bmq_link_check_t;", "",
          "typedef struct bmq_link_field_t {",
          "    const char *name;",
          "    bmq_link_check_t check;",
          "    bool required;",
          "    const struct bmq_link_field_t *fields;     /* object / array: the nested table */",
          "} bmq_link_field_t;", "",
          "/* The hello report's tables, each ending with { NULL }. */"]
    h += ["extern const bmq_link_field_t bmq_link_%s_fields[];" % t for t in hr["tables"]]
    h += ["", "#endif", ""]
    c = ["/* bmq_link_proto — GENERATED by proto/gen_protocols.py from proto/blender_link.json. */",
         '#include "bmq_link_proto.h"', "", "#include <string.h>", "",
         "const bmq_link_command_t bmq_link_commands[] = {"]
    for n, cmd in cmds.items():
        c.append("    { %s, %s }," % (s_c_str(n), ", ".join("true" if cmd.get(f) else "false" for f in COMMAND_FLAGS)))
    c += ["    { NULL }", "};", "",
          "const bmq_link_command_t *bmq_link_command (const char *name)", "{",
          "    for (const bmq_link_command_t *c = bmq_link_commands; name && c->name; c++)",
          "        if (!strcmp (c->name, name)) return c;",
          "    return NULL;", "}", ""]
    # nested tables first: C needs them declared before use (they are extern in the header)
    for t, fields in hr["tables"].items():
        c.append("const bmq_link_field_t bmq_link_%s_fields[] = {" % t)
        for f in fields:
            nested = "bmq_link_%s_fields" % f["fields"] if "fields" in f else "NULL"
            c.append("    { %s, BMQ_LINK_CHECK_%s, %s, %s }," % (s_c_str(f["name"]), f["check"].upper(),
                                                               "true" if f.get("required") else "false", nested))
        c += ["    { NULL }", "};", ""]
    return "\n".join(h), "\n".join(c)


def c_sandbox(sb):
    h = ["/* bmq_sandbox_proto — GENERATED by proto/gen_protocols.py from proto/sandbox.json: do not",
         " * edit. The sandbox runner's fd-3 protocol: line limits, the job's and the result's fields,",
         " * the verdicts. */",
         "#ifndef BMQ_SANDBOX_PROTO_H", "#define BMQ_SANDBOX_PROTO_H", "",
         "#include <stdbool.h>", "",
         "#define BMQ_SANDBOX_MAX_LINE %du" % sb["max_line"],
         "#define BMQ_SANDBOX_JOB_MAX_LINE %du" % sb["job_max_line"], "",
         "typedef struct { const char *name; bool required; } bmq_sandbox_field_t;", "",
         "/* Each ends with { NULL } / NULL. */",
         "extern const bmq_sandbox_field_t bmq_sandbox_ready_fields[];",
         "extern const bmq_sandbox_field_t bmq_sandbox_job_fields[];",
         "extern const char *const bmq_sandbox_result_fields[];",
         "extern const char *const bmq_sandbox_runner_verdicts[];",
         "extern const char *const bmq_sandbox_pool_verdicts[];", "",
         "/* name is in the NULL-terminated list. */",
         "bool bmq_sandbox_proto_has (const char *const *list, const char *name);", "",
         "#endif", ""]
    c = ["/* bmq_sandbox_proto — GENERATED by proto/gen_protocols.py from proto/sandbox.json. */",
         '#include "bmq_sandbox_proto.h"', "", "#include <string.h>", ""]
    for name in ("ready", "job"):
        c.append("const bmq_sandbox_field_t bmq_sandbox_%s_fields[] = {" % name)
        c += ["    { %s, %s }," % (s_c_str(k), "true" if v.get("required") else "false") for k, v in sb[name].items()]
        c += ["    { NULL }", "};", ""]
    for name, items in (("result_fields", sb["result"]), ("runner_verdicts", sb["verdicts"]["runner"]),
                        ("pool_verdicts", sb["verdicts"]["pool"])):
        c.append("const char *const bmq_sandbox_%s[] = { %s, NULL };" % (name, ", ".join(s_c_str(i) for i in items)))
    c += ["", "bool bmq_sandbox_proto_has (const char *const *list, const char *name)", "{",
          "    for (; name && *list; list++)", "        if (!strcmp (*list, name)) return true;",
          "    return false;", "}", ""]
    return "\n".join(h), "\n".join(c)


# ---------------------------------------------------------------------------- script rules
# proto/script_rules.json: the allowlists and caps of BPY scripts (common/script/script_rules.h
# says what each list means). One declaration for the validator's and sandbox's C tables and
# the add-on's run-time guard (issue 31: the add-on's copies were hand-made).

RULES_KEYS = {"about", "lists", "limits"}


def check_rules(d):
    s_need(isinstance(d, dict) and set(d) <= RULES_KEYS and {"lists", "limits"} <= set(d), "script_rules",
           "an object with lists and limits (and about)")
    s_need(isinstance(d["lists"], dict) and d["lists"], "script_rules.lists", "an object of lists")
    for name, e in d["lists"].items():
        where = "script_rules.lists." + name
        s_need(name.isidentifier() and name.islower(), where, "a lower-case identifier")
        s_need(isinstance(e, dict) and set(e) <= {"about", "items", "groups"} and ("items" in e) != ("groups" in e),
               where, "about and either items or groups")
        groups = e["groups"] if "groups" in e else [{"items": e["items"]}]
        s_need(isinstance(groups, list) and groups, where, "groups is a list")
        seen = set()
        for g in groups:
            s_need(isinstance(g, dict) and set(g) <= {"about", "items"} and isinstance(g.get("items"), list),
                   where, "a group is {about, items}")
            for item in g["items"]:
                s_need(isinstance(item, str) and item and item.isascii() and item.isprintable()
                       and '"' not in item and "\\" not in item, where, "items are plain ASCII strings (%r)" % (item,))
                s_need(item not in seen, where, "%s is listed twice" % item)
                seen.add(item)
    s_need(isinstance(d["limits"], dict) and d["limits"], "script_rules.limits", "an object of limits")
    for name, lim in d["limits"].items():
        where = "script_rules.limits." + name
        s_need(name.isidentifier() and name.islower(), where, "a lower-case identifier")
        s_need(isinstance(lim, dict) and set(lim) <= {"value", "about"}, where, "{value, about}")
        v = lim.get("value")
        s_need(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1e15, where,
               "value is a positive number")


def rules_items(e):
    """A list's items in declared order (groups flattened)."""
    return [i for g in e.get("groups", [{"items": e.get("items", [])}]) for i in g["items"]]


def python_rules(d):
    out = ['"""script_rules — GENERATED by proto/gen_protocols.py from proto/script_rules.json: do not edit',
           '(edit that and rebuild; ctest script.rules_fresh fails while this copy is stale). What a BPY',
           'script may use, the same lists the validator and the sandbox use (common/script/script_rules.c):',
           'script_exec.py takes its MODULES, BUILTINS, DENIED_* from here. Standard library only: the',
           'sandbox runner imports it from /sandbox."""', ""]
    for name, e in d["lists"].items():
        out += textwrap.wrap(e.get("about", "").split(". ")[0], 100, initial_indent="# ", subsequent_indent="# ")
        out.append("%s = (%s)" % (name.upper(), s_wrapped([json.dumps(i) for i in rules_items(e)], ",", 4)))
    out += ["", "# The caps (limits.*)", "LIMITS = %s" % s_py({k: v["value"] for k, v in d["limits"].items()})]
    return "\n".join(out) + "\n"


def s_wrapped(words, tail, indent):
    """words joined by ", " into lines of at most 100 characters, each line indented; the last
    word followed by `tail` (a tuple's "," or C's ", NULL")."""
    lines, line = [], " " * indent
    for i, w in enumerate(words):
        t = w + (tail if i == len(words) - 1 else ",")
        if len(line) + len(t) + 1 > 100 and line.strip():
            lines.append(line.rstrip())
            line = " " * indent
        line += t + " "
    lines.append(line.rstrip())
    return "\n" + "\n".join(lines) + "\n"


def c_rules(d):
    h = ["/* bmq_script_rules_table — GENERATED by proto/gen_protocols.py from proto/script_rules.json:",
         " * do not edit. The script rules' default lists and limits, in declared order; script_rules.c",
         " * builds its JSON rules from them (common/script/script_rules.h says what each means). */",
         "#ifndef BMQ_SCRIPT_RULES_TABLE_H", "#define BMQ_SCRIPT_RULES_TABLE_H", "",
         "typedef struct {", "    const char *key;", "    const char *const *items;     /* ends with NULL */",
         "} bmq_script_rule_list_t;", "",
         "typedef struct {", "    const char *key;", "    double value;", "} bmq_script_rule_limit_t;", "",
         "/* Each ends with { NULL }. */",
         "extern const bmq_script_rule_list_t bmq_script_rule_lists[];",
         "extern const bmq_script_rule_limit_t bmq_script_rule_limits[];", "", "#endif", ""]
    c = ["/* bmq_script_rules_table — GENERATED by proto/gen_protocols.py from proto/script_rules.json. */",
         '#include "bmq_script_rules_table.h"', "", "#include <stddef.h>", ""]
    for name, e in d["lists"].items():
        c.append("static const char *const s_%s[] = {%s};" % (name, s_wrapped([s_c_str(i) for i in rules_items(e)],
                                                                          ", NULL", 4)))
        c.append("")
    c.append("const bmq_script_rule_list_t bmq_script_rule_lists[] = {")
    c += ["    { %s, s_%s }," % (s_c_str(n), n) for n in d["lists"]]
    c += ["    { NULL }", "};", "", "const bmq_script_rule_limit_t bmq_script_rule_limits[] = {"]
    c += ["    { %s, %r }," % (s_c_str(n), float(v["value"])) for n, v in d["limits"].items()]
    c += ["    { NULL }", "};", ""]
    return "\n".join(h), "\n".join(c)


def s_check_file(path, text, how):
    """0 when the file at path is text; 1 (saying how to regenerate it) otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            current = f.read()
    except OSError as e:
        print("gen_protocols: %s" % e, file=sys.stderr)
        return 1
    if current != text:
        print("%s is stale: regenerate it with\n  /usr/bin/python3 proto/gen_protocols.py %s --python %s"
              % (path, how, path), file=sys.stderr)
        return 1
    print("%s matches the declarations" % path)
    return 0


def rules_main(opts):
    try:
        rules = load(opts.rules)
        check_rules(rules)
    except (OSError, ValueError, DeclError) as e:
        print("gen_protocols: %s" % e, file=sys.stderr)
        return 2
    if opts.c_dir:
        os.makedirs(opts.c_dir, exist_ok=True)
        h, c = c_rules(rules)
        s_write(os.path.join(opts.c_dir, "bmq_script_rules_table.h"), h)
        s_write(os.path.join(opts.c_dir, "bmq_script_rules_table.c"), c)
    module = python_rules(rules)
    if opts.python:
        s_write(opts.python, module)
    if opts.check:
        return s_check_file(opts.check, module, "--rules %s" % opts.rules)
    return 0


def assets_main(opts):
    try:
        assets = load(opts.assets)
        check_assets(assets)
    except (OSError, ValueError, DeclError) as e:
        print("gen_protocols: %s" % e, file=sys.stderr)
        return 2
    if opts.c_dir:
        os.makedirs(opts.c_dir, exist_ok=True)
        h, c = c_assets(assets)
        s_write(os.path.join(opts.c_dir, "bmq_assets_proto.h"), h)
        s_write(os.path.join(opts.c_dir, "bmq_assets_proto.c"), c)
    module = python_assets(assets)
    if opts.python:
        s_write(opts.python, module)
    if opts.check:
        return s_check_file(opts.check, module, "--assets %s" % opts.assets)
    return 0


# ---------------------------------------------------------------------------- main

def s_write(path, text):
    """Write only when the content changes (keeps make from rebuilding what did not)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--link")
    p.add_argument("--sandbox")
    p.add_argument("--rules")
    p.add_argument("--assets")
    p.add_argument("--c-dir")
    p.add_argument("--python")
    p.add_argument("--check")
    opts = p.parse_args(argv)
    if opts.rules:                      # the script rules: a declaration of their own
        return rules_main(opts)
    if opts.assets:                     # the staged asset's names: a declaration of their own
        return assets_main(opts)
    if not opts.link or not opts.sandbox:
        p.error("--link and --sandbox are required (or --rules)")
    try:
        link, sandbox = load(opts.link), load(opts.sandbox)
        check_link(link)
        check_sandbox(sandbox)
    except (OSError, ValueError, DeclError) as e:
        print("gen_protocols: %s" % e, file=sys.stderr)
        return 2
    if opts.c_dir:
        os.makedirs(opts.c_dir, exist_ok=True)
        for stem, (h, c) in (("bmq_link_proto", c_link(link)), ("bmq_sandbox_proto", c_sandbox(sandbox))):
            s_write(os.path.join(opts.c_dir, stem + ".h"), h)
            s_write(os.path.join(opts.c_dir, stem + ".c"), c)
    module = python_module(link, sandbox)
    if opts.python:
        s_write(opts.python, module)
    if opts.check:
        try:
            with open(opts.check, encoding="utf-8") as f:
                current = f.read()
        except OSError as e:
            print("gen_protocols: %s" % e, file=sys.stderr)
            return 1
        if current != module:
            print("%s is stale: regenerate it with\n  /usr/bin/python3 proto/gen_protocols.py --link %s --sandbox %s"
                  " --python %s" % (opts.check, opts.link, opts.sandbox, opts.check), file=sys.stderr)
            return 1
        print("%s matches the declarations" % opts.check)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
