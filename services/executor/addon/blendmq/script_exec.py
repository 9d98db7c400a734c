"""script_exec — the one run-time guard for BPY scripts (issue: "live Blender runs exactly the
program that was checked, and nothing wider").

Used by the live add-on (commands.cmd_run_script) and by the sandbox runner
(services/executor/sandbox/sandbox_runner.py, which imports this file standalone from
/sandbox/script_exec.py): so it imports nothing from the blendmq package, only the standard
library, and bpy lazily (the first time a script imports it).

  check_source(source)              the text is what the validator saw: a str, no BOM, no
                                    encoding declaration other than UTF-8, no NUL, no lone
                                    surrogates
  prepare(source, sha256, modules, builtins) -> (code, globals)
                                    check_source, the seal (sha256 of the UTF-8 text), the one
                                    compile, a fast check of the bytecode (no '_' names, no
                                    denied names, no dunder strings, no handler that could
                                    swallow the timeout, no string naming a type that writes
                                    on the host), and the restricted globals: fixed allowlists
                                    a request can only narrow, imports answered with read-only
                                    facades of the allowed modules built for this script alone
                                    (issue 23: random and mathutils.noise seeded from the
                                    sha256, repr/str/f-strings without addresses), and the AST
                                    rewritten so that sizes computed at run time go through
                                    the size guards ("size too large": pow, **, *, +, <<, %,
                                    bytes(n), int(text), factorial, padding, ranges made lists)
  hazards() / check_after(before)   what a script left that writes on the host (file output
                                    nodes, fluid/cloth/dynamic paint) or is too big for the link
                                    (an ID property over 1 MiB): the sandbox rejects it, live
                                    refuses it before the commit
  settle()                          the depsgraph evaluated, before a fingerprint
  run(code, globals, timeout_ms, cancelled=None)
                                    exec on the calling (main) thread, prints captured, under a
                                    wall-clock limit enforced by a watchdog thread that raises
                                    ScriptTimeout inside the script; the same watchdog asks
                                    cancelled() (on its own thread) every CANCEL_POLL_S and,
                                    once it says yes, raises ScriptCancelled the same way (a
                                    script that swallows it still ends at its time limit)
  format_error(exc, source)         the traceback, frames of "<script>" only

Nothing here is a substitute for the static validator: it repeats the cheap, decisive checks
at the moment of execution so that what runs is exactly what was checked and nothing wider.
"""
import ast
import builtins as _builtins_module
import ctypes
import dis
import hashlib
import importlib
import io
import re
import sys
import threading
import time
import traceback
import types

# Fixed allowlists, declared once in proto/script_rules.json (the validator's and the sandbox's
# C tables come from the same declaration): the generated script_rules.py, next to this file in
# the add-on and in /sandbox. A request may only narrow them.
try:
    from . import script_rules as _rules        # the add-on
except ImportError:
    import script_rules as _rules               # standalone: /sandbox, tests (this file's folder on sys.path)

MODULES = frozenset(_rules.MODULES)
BUILTINS = frozenset(_rules.BUILTINS)
FORBIDDEN_BUILTINS = frozenset(_rules.FORBIDDEN_BUILTINS)
DENIED_ATTRIBUTES = frozenset(_rules.DENIED_ATTRIBUTES)

DENIED_NAMES = FORBIDDEN_BUILTINS | DENIED_ATTRIBUTES

# Names the compiler itself emits for a docstring or an annotation (compiler temporaries such
# as ".0" start with "." and are allowed too).
COMPILER_NAMES = frozenset({"__doc__", "__annotations__"})
# Python 3.14's lazy annotations (PEP 649; Blender 5): the compiler also emits these. They are
# allowed in the bytecode only when no identifier or string of the source is one of them
# (s_source_strings), so a script cannot name them itself (issue 30).
ANNOTATION_NAMES = frozenset({"__annotate__", "__conditional_annotations__"})

# What each facade holds (None: every public attribute).
FACADE_NAMES = {
    "bpy": _rules.BPY_ROOTS,        # bpy_roots of proto/script_rules.json
    "bmesh": ("new", "ops", "types", "utils", "geometry", "from_edit_mesh", "update_edit_mesh"),
    "mathutils": None,
    "math": None,
    "random": None,          # further limited to public functions and classes (see s_build)
}

OUTPUT_MAX = 64 * 1024       # the tail of the script's prints that is kept
TIMEOUT_REPEAT_S = 0.1       # the watchdog raises again this often until the script is gone
CANCEL_POLL_S = 0.05         # how often the watchdog asks whether the run was cancelled (issue 29)
ESCALATE_S = 0.5             # a script still running this long after it was told to stop is stopped harder

_COOKIE_LINE = re.compile(r"^[ \t\f]*#")
_COOKIE = re.compile(r"coding[:=][ \t]*([-\w.]+)")
_COOKIE_CPYTHON = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class ScriptRefused(Exception):
    """The script is refused before anything runs; the text is the reason, for the user."""


class ScriptTimeout(BaseException):
    """Raised inside the script by the watchdog: the script ran past its time limit."""


class ScriptCancelled(ScriptTimeout):
    """Raised inside the script by the watchdog: the run was cancelled (issue 29: Ctrl-C on
    `script apply`, `blendmq cancel`). A ScriptTimeout, so that whatever stops a timeout
    reaching the script's handlers (the bytecode and handler checks) stops this one too."""


# ---------------------------------------------------------------------------- the text

def s_utf8_name(name):
    """CPython's get_normal_name, then: is it UTF-8?"""
    n = name.lower().replace("_", "-")
    return n in ("utf-8", "utf8") or n.startswith("utf-8-") or n.startswith("utf8-")


def s_first_lines(source):
    """Lines 1 and 2 under every line-ending convention a reader might use (stricter than
    CPython's own, which only knows \\n, \\r\\n and \\r)."""
    lines = []
    for split in (source.split("\n"), re.split(r"\r\n|\r|\n", source), source.splitlines()):
        lines.extend(split[:2])
    return lines


def check_source(source):
    """Raise ScriptRefused unless `source` is text the validator could have seen as is."""
    if not isinstance(source, str):
        raise ScriptRefused("the script must be text (str), not %s" % type(source).__name__)
    if source.startswith("\ufeff"):
        raise ScriptRefused("the script starts with a byte order mark (U+FEFF)")
    if "\x00" in source:
        raise ScriptRefused("the script contains a NUL character")
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ScriptRefused("the script is not valid Unicode text (%s at %d)" % (e.reason, e.start))
    for line in s_first_lines(source):
        hits = []
        m = _COOKIE_CPYTHON.match(line)
        if m:
            hits.append(m.group(1))
        if _COOKIE_LINE.match(line):
            hits.extend(h.group(1) for h in _COOKIE.finditer(line))
        for name in hits:
            if not s_utf8_name(name):
                raise ScriptRefused("the script declares the encoding %r: only UTF-8 is allowed"
                                    % name[:40])


# ---------------------------------------------------------------------------- the bytecode

def s_is_dunder(s):
    return len(s) > 4 and s.startswith("__") and s.endswith("__")


def s_private(name):
    """A name no script may use: it starts with "_" (compiler temporaries start with "." and
    the compiler's own "__doc__" and "__annotations__" are allowed)."""
    if not isinstance(name, str):
        return True
    if name.startswith(".") or name in COMPILER_NAMES:
        return False
    return name.startswith("_")


# How an instruction uses a name of co_names: as an attribute, or as a variable or module.
ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})
IMPORT_OPS = frozenset({"IMPORT_NAME", "IMPORT_FROM"})


def s_check_uses(code, names, where):
    """co_names mixes variables and attributes, and a few names are both denied in one role
    and ordinary in the other (bpy.ops.object, obj.type; a variable called area): for a name
    of DENIED_NAMES, look at how each instruction uses it. As an attribute it must not be a
    denied attribute; as a variable, not a forbidden builtin; imported, neither."""
    for ins in dis.get_instructions(code):
        if ins.opcode not in dis.hasname or ins.argval not in names:
            continue
        name = ins.argval
        if ins.opname in ATTRIBUTE_OPS:
            bad = name in DENIED_ATTRIBUTES
        elif ins.opname in IMPORT_OPS:
            bad = True
        else:
            bad = name in FORBIDDEN_BUILTINS
        if bad:
            raise ScriptRefused("line %s: the name %r is not allowed"
                                % (ins.positions.lineno if ins.positions and ins.positions.lineno
                                   else code.co_firstlineno, name))


def s_source_strings(tree):
    """Every str a node of the script's AST holds: identifiers, attributes, constants."""
    out = set()
    for node in ast.walk(tree):
        for _field, value in ast.iter_fields(node):
            if isinstance(value, str):
                out.add(value)
            elif isinstance(value, list):
                out.update(v for v in value if isinstance(v, str))
    return out


def s_check_const(value, where, depth=0, allowed=frozenset()):
    if isinstance(value, str):
        if s_is_dunder(value):
            raise ScriptRefused("%s: the string %r is not allowed" % (where, value[:60]))
    elif isinstance(value, (tuple, frozenset)):
        if depth > 50:
            raise ScriptRefused("%s: constants nested too deep" % where)
        for v in value:
            s_check_const(v, where, depth + 1, allowed)
    elif isinstance(value, types.CodeType):
        s_check_code(value, depth + 1, allowed)


def s_check_code(code, depth=0, allowed=frozenset()):
    """Every code object, recursively: names and constants."""
    if depth > 200:
        raise ScriptRefused("code nested too deep")
    where = "line %s" % code.co_firstlineno
    for field in (code.co_names, code.co_varnames, code.co_cellvars, code.co_freevars):
        for name in field:
            if s_private(name) and name not in allowed:
                raise ScriptRefused("%s: the name %r is not allowed" % (where, str(name)[:60]))
    # the compiler's own annotate function (its name cannot come from the source, see
    # ANNOTATION_NAMES) takes one parameter, "format"
    compiler_made = code.co_name == "__annotate__" and "__annotate__" in allowed
    for field in (code.co_varnames, code.co_cellvars, code.co_freevars):     # bound names
        for name in field:
            if name in FORBIDDEN_BUILTINS and not (compiler_made and name == "format"):
                raise ScriptRefused("%s: the name %r is not allowed" % (where, name))
    denied = DENIED_NAMES.intersection(code.co_names)
    if denied:
        s_check_uses(code, denied, where)
    for const in code.co_consts:
        s_check_const(const, where, depth, allowed)


class s_HandlerCheck(ast.NodeVisitor):
    """What could swallow ScriptTimeout: a bare `except:`, and return / break / continue that
    leave a `finally:` block (they discard the exception in flight)."""

    def visit_ExceptHandler(self, node):
        if node.type is None:
            raise ScriptRefused("line %d: a bare 'except:' is not allowed" % node.lineno)
        self.generic_visit(node)

    def s_try(self, node):
        for stmt in node.finalbody:
            s_check_finally(stmt, False)
        self.generic_visit(node)

    visit_Try = s_try
    visit_TryStar = s_try


def s_check_finally(node, in_loop):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return
    if isinstance(node, ast.Return) or (isinstance(node, (ast.Break, ast.Continue)) and not in_loop):
        raise ScriptRefused("line %d: '%s' inside a 'finally:' block is not allowed"
                            % (node.lineno, type(node).__name__.lower()))
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        for child in node.body:
            s_check_finally(child, True)
        for child in node.orelse:
            s_check_finally(child, in_loop)
        s_check_finally(node.iter if not isinstance(node, ast.While) else node.test, in_loop)
        return
    for child in ast.iter_child_nodes(node):
        s_check_finally(child, in_loop)


# ---------------------------------------------------------------------------- facades

class s_Facade(types.ModuleType):
    """A read-only module holding public attributes only: assignments to it fail, so a
    script cannot leave anything behind in it for the next script."""

    def __setattr__(self, name, value):
        raise AttributeError("module %r is read-only" % self.__name__)

    def __delattr__(self, name):
        raise AttributeError("module %r is read-only" % self.__name__)


# Operators (op_categories, denied_ops, denied_op_words of proto/script_rules.json): bpy.ops in
# a script shows these categories only, without the denied operators (the static validator
# refuses the rest; this is the same rule at run time).
OP_CATEGORIES = frozenset(_rules.OP_CATEGORIES)
DENIED_OPS = frozenset(_rules.DENIED_OPS)
DENIED_OP_WORDS = _rules.DENIED_OP_WORDS


# True makes bpy.ops in a script show only the categories and operators above. The live add-on
# turns it on (commands.py, before any facade is built: facades are built once per process);
# the sandbox leaves it off on purpose: there the static rules are the only operator gate, so
# an operator that slipped through them acts, and the host-side checks (files written, scene
# diff) see what it did and fail the verdict, instead of the guard hiding the slip.
OP_FILTER = False


def s_allow_category(name):
    return not OP_FILTER or name in OP_CATEGORIES


def s_allow_operator(category):
    def allow(name):
        return not OP_FILTER or (("%s.%s" % (category, name)) not in DENIED_OPS
                                 and not any(w in name for w in DENIED_OP_WORDS))
    return allow


def s_canonical_mesh(mesh):
    """Put a mesh's faces, edges and corners in one order that depends on its vertices only.
    Blender 3.4.1's primitive_uv_sphere_add merges the poles' vertices with a pointer-keyed
    map, so its edges, faces and corners come out in a different order in every process: a
    coin for any script that indexes them, and a divergence for the fingerprint (issue 23).
    Faces are rotated to start at their lowest vertex and sorted; UVs, smooth and material
    follow their face."""
    import bmesh
    bm = bmesh.new()
    try:
        bm.from_mesh(mesh)
        uv = bm.loops.layers.uv.active
        uv_name = uv.name if uv is not None else None
        bm.verts.ensure_lookup_table()
        faces = []
        for f in bm.faces:
            vs = [l.vert.index for l in f.loops]
            uvs = [tuple(l[uv].uv) for l in f.loops] if uv is not None else None
            k = vs.index(min(vs))
            faces.append((vs[k:] + vs[:k], (uvs[k:] + uvs[:k]) if uvs else None, f.smooth, f.material_index))
        loose = sorted(tuple(sorted(v.index for v in e.verts)) for e in bm.edges if not e.link_faces)
        faces.sort(key=lambda t: t[0])
        out = bmesh.new()
        try:
            for v in bm.verts:
                out.verts.new(v.co)
            out.verts.ensure_lookup_table()
            layer = out.loops.layers.uv.new(uv_name) if uv_name else None
            for vs, uvs, smooth, mat in faces:
                f = out.faces.new([out.verts[i] for i in vs])
                f.smooth, f.material_index = smooth, mat
                if layer is not None:
                    for l, co in zip(f.loops, uvs):
                        l[layer].uv = co
            for a, b in loose:
                out.edges.new((out.verts[a], out.verts[b]))
            out.to_mesh(mesh)
        finally:
            out.free()
    finally:
        bm.free()
    mesh.update()


def s_canonical_after(op):
    """An operator whose new mesh is canonicalised (s_canonical_mesh) when it ran in object mode."""
    def call(*args, **kwargs):
        import bpy
        ctx = bpy.context
        before = ctx.active_object
        result = op(*args, **kwargs)
        obj = ctx.active_object
        if "FINISHED" in result and obj is not None and obj is not before and obj.type == "MESH" \
                and obj.mode == "OBJECT" and obj.data.users == 1:
            s_canonical_mesh(obj.data)
        return result
    return call


CANONICAL_OPS = frozenset({"mesh.primitive_uv_sphere_add"})

# Live: a function giving the palette's bounds the executor sent at hello ({operation: {param:
# {type, min, max, ...}}}, bounds.py); an operator of the palette called by a script with an int
# outside them is refused (ValueError) before it runs. The sandbox has no hello and skips this:
# such a script passes the sandbox, fails live and is rolled back.
OP_BOUNDS = [None]


def s_bounded_op(full, op):
    def call(*args, **kwargs):
        get = OP_BOUNDS[0]
        spec = (get() or {}).get(full) if get is not None else None
        if isinstance(spec, dict):
            for key, v in kwargs.items():
                s = spec.get(key)
                if not isinstance(s, dict) or not isinstance(v, _real_int) or isinstance(v, bool):
                    continue
                lo, hi = s.get("min"), s.get("max")
                if (isinstance(hi, (_real_int, float)) and v > hi) or (isinstance(lo, (_real_int, float)) and v < lo):
                    raise ValueError("size too large: %s(%s=%d): the palette allows %s..%s" % (full, key, v, lo, hi))
        return op(*args, **kwargs)
    return call


class s_Delegate(s_Facade):
    """A read-only view of a module whose attributes appear on demand (bpy.ops and its
    categories): public names that `allow` lets through, submodules again as views."""

    def __getattr__(self, name):
        d = self.__dict__
        if name.startswith("_") or not d["_s_allow"](name):
            raise AttributeError("%s.%s is not allowed" % (d["_s_real"].__name__, name))
        value = getattr(d["_s_real"], name)
        if d.get("_s_category"):
            full = "%s.%s" % (d["_s_category"], name)
            if full in CANONICAL_OPS:
                value = s_canonical_after(value)
            return s_bounded_op("bpy.ops." + full, value) if OP_BOUNDS[0] is not None else value
        if isinstance(value, types.ModuleType):
            cache = d["_s_cache"]
            if name not in cache:
                cache[name] = s_delegate(value, s_allow_operator(name))
                cache[name].__dict__["_s_category"] = name
            return cache[name]
        return value


def s_facade_name(real):
    """A facade's __name__. Not the real module's name: `from M import X`, when M has no X,
    falls back to sys.modules["M.X"] by M.__name__, which would hand out the real bpy.app,
    bpy.types... This name matches nothing in sys.modules."""
    return "<facade %s>" % real.__name__


def s_delegate(real, allow):
    d = s_Delegate(s_facade_name(real))
    d.__dict__["_s_real"] = real
    d.__dict__["_s_allow"] = allow
    d.__dict__["_s_cache"] = {}
    return d


def s_facade_of(real, names, depth=0):
    f = s_Facade(s_facade_name(real))
    for name in names:
        if name.startswith("_") or not hasattr(real, name):
            continue
        value = getattr(real, name)
        if isinstance(value, types.ModuleType):
            if real.__name__ == "bpy" and name == "ops":
                value = s_delegate(value, s_allow_category)
            elif depth < 3:
                value = s_facade_of(value, [n for n in dir(value) if not n.startswith("_")], depth + 1)
            else:
                continue
        f.__dict__[name] = value
    return f


# random, the same in the sandbox and live: a script's random numbers come from one generator
# seeded from the script's sha256, built for that script alone (prepare() builds every facade
# again); seed() / seed(None) and Random() fall back to that seed, never to the OS's entropy,
# and SystemRandom is not offered. So "random" cannot be a coin that lands one way in the
# sandbox and the other way live, nor carry anything from one script to the next.

def s_random_namespace(real, seed):
    def seed_of(a):
        return seed if a is None else a

    class Random(real.Random):
        """random.Random whose default seed is the script's, not the OS's entropy (a new class
        for every script: an attribute a script sets on it dies with the script)."""

        def __init__(self, x=None):
            super().__init__(seed_of(x))

        def seed(self, a=None, version=2):
            super().seed(seed_of(a), version)

    rng = Random()
    ns = types.SimpleNamespace()
    for name in getattr(real, "__all__", ()):
        if name.startswith("_") or name == "SystemRandom":
            continue
        value = getattr(real, name, None)
        if name == "Random":
            setattr(ns, name, Random)
        elif callable(value) and hasattr(rng, name):
            setattr(ns, name, getattr(rng, name))        # the bound method of the seeded generator
        elif value is not None and not callable(value):
            setattr(ns, name, value)
    ns.__name__ = real.__name__
    return ns


def s_math_namespace(real, guards):
    ns = types.SimpleNamespace()
    for name in dir(real):
        if not name.startswith("_"):
            setattr(ns, name, guards.get("math." + name, getattr(real, name)))
    ns.__name__ = real.__name__
    return ns


def s_build(root, seed, guards):
    real = importlib.import_module(root)
    names = FACADE_NAMES.get(root)
    if names is None:
        names = [n for n in dir(real) if not n.startswith("_")]
    if root == "random":
        ns = s_random_namespace(real, seed)
        return s_facade_of(ns, [n for n in vars(ns) if not n.startswith("_")])
    if root == "math":
        ns = s_math_namespace(real, guards)
        return s_facade_of(ns, [n for n in vars(ns) if not n.startswith("_")])
    return s_facade_of(real, names)


def s_build_all(mods, seed, guards):
    """Fresh facades of the allowed modules for ONE script (issue 23: nothing a script can reach
    outlives it; a facade built once per process let an earlier script leave an attribute on
    random.Random for a later one). math's factorial, comb and perm go through the size guards."""
    out = {}
    for root in sorted(mods):
        try:
            out[root] = s_build(root, seed, guards)
        except ImportError:
            pass                            # not in this Python (no Blender): refused at import time
    return out


def facade(root, seed=0):
    """A fresh facade of an allowed module (what prepare() builds for every script)."""
    if root not in MODULES:
        raise ImportError("import of %r is not allowed" % root)
    return s_build(root, seed, s_math_guards())


def s_guarded_import(facades):
    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level != 0 or not isinstance(name, str) or not name:
            raise ImportError("relative imports are not allowed")
        parts = name.split(".")
        if parts[0] not in facades:
            raise ImportError("import of %r is not allowed" % name)
        root = facades[parts[0]]
        obj = root
        for part in parts[1:]:
            if not part or part.startswith("_"):
                raise ImportError("import of %r is not allowed" % name)
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise ImportError("import of %r is not allowed" % name) from None
            if not isinstance(obj, s_Facade):
                raise ImportError("import of %r is not allowed" % name)
        for item in fromlist or ():
            if not isinstance(item, str) or (item.startswith("_") and item != "*"):
                raise ImportError("import of %r from %r is not allowed" % (item, name))
        return obj if fromlist else root
    return guarded_import


def s_narrow(request, fixed, what):
    if request is None:
        return set(fixed)
    if isinstance(request, (str, bytes)) or not all(isinstance(v, str) for v in request):
        raise ScriptRefused("%s must be a list of names" % what)
    return set(fixed) & set(request)


# ---------------------------------------------------------------------------- sizes (issue 23)
# No C call may run long: a size computed at run time (pow, **, *, <<, bytes(n), factorial,
# padding, materialised ranges) goes through a guard that raises ValueError("size too large: …")
# before Python starts the work. prepare() rewrites the script's AST so that these operators call
# the guards; the guards' names start with "_" (a script cannot spell them: the bytecode check
# refuses every "_" name before the rewrite). The same code runs in the sandbox and live, so a
# size that is refused is refused in both, with the same message: bytes(6 GiB) is no longer a
# MemoryError under the sandbox's RLIMIT_AS and a success live.

MAX_INT_BITS = 100000            # an int result over this many bits is refused
MAX_ITEMS = 16 << 20             # a list / tuple / set result over this many items
MAX_BYTES = 64 << 20             # a str / bytes result over this many characters / bytes
MAX_INT_DIGITS = 4300            # int(text): as Python 3.11's default limit (quadratic conversion)
MAX_FORMAT_WIDTH = 1 << 20       # a width or precision in a format spec
MAX_PROP_BYTES = 1 << 20         # an ID property string / bytes (limits at the change)

_real_int, _real_str, _real_bytes = int, str, bytes
_real_list, _real_tuple, _real_set, _real_frozenset = list, tuple, set, frozenset
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_SPEC_NUMBER = re.compile(r"\d+")


def s_too_large(what):
    raise ValueError("size too large: %s (limits: ints %d bits, sequences %d items, text %d bytes)"
                     % (what, MAX_INT_BITS, MAX_ITEMS, MAX_BYTES))


def s_bits(v):
    return v.bit_length() if isinstance(v, _real_int) else 0


def s_seq_limit(v):
    """The size limit of a sequence result like v, or None when v is no sequence."""
    if isinstance(v, (_real_str, _real_bytes, bytearray)):
        return MAX_BYTES
    if isinstance(v, (_real_list, _real_tuple)):
        return MAX_ITEMS
    return None


def s_check_repeat(seq, n):
    limit = s_seq_limit(seq)
    if limit is not None and isinstance(n, _real_int) and n > 0 and len(seq) * n > limit:
        s_too_large("a sequence of %d repeated %d times" % (len(seq), n))


def g_mul(a, b):
    ta, tb = type(a), type(b)
    if ta is float or tb is float:
        return a * b
    if isinstance(a, _real_int) and isinstance(b, _real_int):
        if s_bits(a) + s_bits(b) > MAX_INT_BITS:
            s_too_large("an int product of %d and %d bits" % (s_bits(a), s_bits(b)))
    else:
        s_check_repeat(a, b)
        s_check_repeat(b, a)
    return a * b


def g_add(a, b):
    ta = type(a)
    if ta is float or ta is _real_int and type(b) is _real_int:
        return a + b
    la, lb = s_seq_limit(a), s_seq_limit(b)
    if la is not None and lb is not None and len(a) + len(b) > la:
        s_too_large("a sequence of %d + %d" % (len(a), len(b)))
    return a + b


def s_check_pow(a, b, mod=None):
    if mod is None and isinstance(a, _real_int) and isinstance(b, _real_int) and b > 0 and a not in (0, 1, -1):
        if (s_bits(a) - 1) * b > MAX_INT_BITS:          # a lower bound of the result's bits
            s_too_large("an int of %d bits ** %d" % (s_bits(a), b))
    if mod is not None and isinstance(b, _real_int) and s_bits(b) > MAX_INT_BITS:
        s_too_large("a modular exponent of %d bits" % s_bits(b))


def g_pow(a, b, mod=None):
    s_check_pow(a, b, mod)
    return pow(a, b) if mod is None else pow(a, b, mod)


def g_lshift(a, b):
    if isinstance(a, _real_int) and isinstance(b, _real_int) and a and s_bits(a) + b > MAX_INT_BITS:
        s_too_large("an int of %d bits shifted by %d" % (s_bits(a), b))
    return a << b


def g_mod(a, b):
    if isinstance(a, (_real_str, _real_bytes)):
        s_check_format(a if isinstance(a, _real_str) else a.decode("latin-1"), b)
        out = a % b
        return g_scrub(out) if isinstance(out, _real_str) else out
    return a % b


def s_check_format(fmt, args):
    """printf-style widths and precisions ("%99999999d", "%*d")."""
    i = fmt.find("%")
    while i >= 0:
        j = i + 1
        while j < len(fmt) and fmt[j] in "-#0 +.*0123456789()":
            if fmt[j] == "(":
                j = fmt.find(")", j)
                if j < 0:
                    return
            j += 1
        spec = fmt[i + 1:j]
        for m in _SPEC_NUMBER.findall(spec):
            if len(m) > 7 or _real_int(m) > MAX_FORMAT_WIDTH:
                s_too_large("a format width or precision of %s" % m[:20])
        if "*" in spec:
            for v in (args if isinstance(args, _real_tuple) else (args,)):
                if isinstance(v, _real_int) and abs(v) > MAX_FORMAT_WIDTH:
                    s_too_large("a format width or precision of %d" % v)
        i = fmt.find("%", j + 1 if j == i + 1 and j < len(fmt) and fmt[j] == "%" else j)


def g_iop(op):
    """x op= v, in place where the type does it in place (lists), after the same checks."""
    def iop(a, b):
        if op == "*":
            g_mul(a, b)
            a *= b
        elif op == "+":
            g_add(a, b)
            a += b
        elif op == "**":
            s_check_pow(a, b)
            a **= b
        elif op == "<<":
            g_lshift(a, b)
            a <<= b
        else:
            a = g_mod(a, b)
        return a
    return iop


PAD_METHODS = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs", "replace"})


def g_method(obj, name, *args, **kwargs):
    """obj.ljust(n) & co (PAD_METHODS): the result's length is checked first for str / bytes."""
    if isinstance(obj, (_real_str, _real_bytes, bytearray)):
        if name == "replace":
            old = args[0] if args else kwargs.get("old")
            new = args[1] if len(args) > 1 else kwargs.get("new")
            if isinstance(old, type(obj)) and isinstance(new, type(obj)) and len(new) > len(old):
                count = len(obj) + 1 if not old else obj.count(old)
                if len(obj) + count * (len(new) - len(old)) > MAX_BYTES:
                    s_too_large("a replace() result of about %d" % (len(obj) + count * (len(new) - len(old))))
        else:
            for v in _real_list(args) + _real_list(kwargs.values()):
                if isinstance(v, _real_int) and (v > MAX_BYTES or (name == "expandtabs" and v * len(obj) > MAX_BYTES)):
                    s_too_large("%s(%d)" % (name, v))
    return getattr(obj, name)(*args, **kwargs)


def g_scrub(text):
    """What an address looks like to a script: " at 0x0" (it differs between two processes)."""
    return _ADDRESS.sub(" at 0x0", text) if " at 0x" in text else text


def g_repr(obj):
    return g_scrub(repr(obj))


def g_format(value, conversion, spec):
    """An f-string's {value!c:spec}: the address scrubbed, the width and precision bounded."""
    if spec:
        for m in _SPEC_NUMBER.findall(spec):
            if len(m) > 7 or _real_int(m) > MAX_FORMAT_WIDTH:
                s_too_large("a format width or precision of %s" % m[:20])
    if conversion == 114:
        value = g_repr(value)
    elif conversion == 115:
        value = g_scrub(_real_str(value))
    elif conversion == 97:
        value = g_scrub(ascii(value))
    elif type(value).__format__ is object.__format__:
        value = g_scrub(_real_str(value))
    return format(value, spec or "")


def s_fact_check(n, what):
    if isinstance(n, _real_int) and n > 5000:        # 5000! is ~54,000 bits; 5001..: past the bound soon
        s_too_large("%s(%d)" % (what, n))


def s_math_guards():
    import math
    def factorial(n):
        s_fact_check(n, "factorial")
        return math.factorial(n)

    def comb(n, k):
        if isinstance(n, _real_int) and isinstance(k, _real_int) and min(k, n - k) > 5000 and n > 5000:
            s_too_large("comb(%d, %d)" % (n, k))
        return math.comb(n, k)

    def perm(n, k=None):
        if isinstance(n, _real_int) and n > 5000 and (k is None or (isinstance(k, _real_int) and k > 5000)):
            s_too_large("perm(%d, %s)" % (n, k))
        return math.perm(n, k)
    return {"math.factorial": factorial, "math.comb": comb, "math.perm": perm}


class s_TypeProxy(type):
    """A builtin type as a script sees it: calling it goes through a guard; isinstance,
    issubclass and its methods (str.join) are the real type's."""

    def __call__(cls, *args, **kwargs):
        return cls.s_call(*args, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.s_real)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.s_real)

    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(cls.s_real, name)

    def __repr__(cls):
        return repr(cls.s_real)


def s_proxy(real, call):
    return s_TypeProxy(real.__name__, (), {"s_real": real, "s_call": staticmethod(call),
                                           "__module__": "builtins", "__qualname__": real.__name__})


def s_materialise_check(args):
    if args and isinstance(args[0], range) and len(args[0]) > MAX_ITEMS:
        s_too_large("a range of %d items made a sequence" % len(args[0]))


def s_call_int(*args, **kwargs):
    if args and isinstance(args[0], (_real_str, _real_bytes, bytearray)) and len(args[0]) > MAX_INT_DIGITS:
        s_too_large("int() of a text of %d digits (at most %d)" % (len(args[0]), MAX_INT_DIGITS))
    return _real_int(*args, **kwargs)


def s_call_str(*args, **kwargs):
    out = _real_str(*args, **kwargs)
    return out if args and isinstance(args[0], _real_str) else g_scrub(out)


def s_call_bytes(*args, **kwargs):
    if args and isinstance(args[0], _real_int) and args[0] > MAX_BYTES:
        s_too_large("bytes(%d)" % args[0])
    return _real_bytes(*args, **kwargs)


def s_call_seq(real):
    def call(*args, **kwargs):
        s_materialise_check(args)
        return real(*args, **kwargs)
    return call


def s_guarded_builtins():
    """The builtins a script gets in place of the real ones (when allowed)."""
    def sorted_(*args, **kwargs):
        s_materialise_check(args)
        return sorted(*args, **kwargs)
    return {
        "pow": g_pow, "repr": g_repr, "sorted": sorted_,
        "int": s_proxy(_real_int, s_call_int), "str": s_proxy(_real_str, s_call_str),
        "bytes": s_proxy(_real_bytes, s_call_bytes),
        "list": s_proxy(_real_list, s_call_seq(_real_list)), "tuple": s_proxy(_real_tuple, s_call_seq(_real_tuple)),
        "set": s_proxy(_real_set, s_call_seq(_real_set)),
        "frozenset": s_proxy(_real_frozenset, s_call_seq(_real_frozenset)),
    }


for _f, _n in ((g_pow, "pow"), (g_repr, "repr")):
    _f.__name__ = _f.__qualname__ = _n

# The names the rewritten AST calls (a script cannot spell them: they start with "_").
GUARDS = {"_bmq_mul": g_mul, "_bmq_add": g_add, "_bmq_pow": g_pow, "_bmq_lshift": g_lshift,
          "_bmq_mod": g_mod, "_bmq_method": g_method, "_bmq_format": g_format,
          "_bmq_imul": g_iop("*"), "_bmq_iadd": g_iop("+"), "_bmq_ipow": g_iop("**"),
          "_bmq_ilshift": g_iop("<<"), "_bmq_imod": g_iop("%"), "_bmq_slice": slice}
_BINOPS = {ast.Mult: "_bmq_mul", ast.Add: "_bmq_add", ast.Pow: "_bmq_pow", ast.LShift: "_bmq_lshift",
           ast.Mod: "_bmq_mod"}
_AUGOPS = {ast.Mult: "_bmq_imul", ast.Add: "_bmq_iadd", ast.Pow: "_bmq_ipow", ast.LShift: "_bmq_ilshift",
           ast.Mod: "_bmq_imod"}


def s_call(name, args, node):
    return ast.copy_location(ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[]), node)


def s_number(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, (_real_int, float, complex))


def s_cheap(node):
    """A binary operation that cannot make a large result, left as it is (the guards cost a call):
    + with a number (an int grows by a bit at most; a sequence + a number is a TypeError) and *
    with a float or complex (a float result, or a TypeError) or with -1, 0 or 1."""
    sides = (node.left, node.right)
    if isinstance(node.op, ast.Add):
        return any(s_number(x) for x in sides)
    if isinstance(node.op, ast.Mult):
        return any(s_number(x) and (isinstance(x.value, (float, complex)) or -1 <= x.value <= 1) for x in sides)
    return False


class s_SizeRewrite(ast.NodeTransformer):
    """Deterministic: the same source gives the same program in the sandbox and live."""

    def __init__(self):
        self.temps = 0

    def s_temp(self):
        self.temps += 1
        return "_bmq_t%d" % self.temps

    def visit_BinOp(self, node):
        self.generic_visit(node)
        name = _BINOPS.get(type(node.op))
        if name is None:
            return node
        if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant) \
                and isinstance(node.left.value, (float, complex)):
            return node
        if s_cheap(node):
            return node
        return s_call(name, [node.left, node.right], node)

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in PAD_METHODS:
            return ast.copy_location(ast.Call(func=ast.Name(id="_bmq_method", ctx=ast.Load()),
                                              args=[f.value, ast.Constant(f.attr)] + node.args,
                                              keywords=node.keywords), node)
        return node

    def visit_FormattedValue(self, node):
        self.generic_visit(node)
        spec = node.format_spec if node.format_spec is not None else ast.Constant("")
        call = s_call("_bmq_format", [node.value, ast.Constant(node.conversion), spec], node)
        return ast.copy_location(ast.FormattedValue(value=call, conversion=-1, format_spec=None), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        name = _AUGOPS.get(type(node.op))
        if name is None:
            return node
        t = node.target
        if isinstance(t, ast.Name):
            load = ast.Name(id=t.id, ctx=ast.Load())
            return ast.copy_location(ast.Assign(targets=[ast.Name(id=t.id, ctx=ast.Store())],
                                                value=s_call(name, [load, node.value], node)), node)
        pre = []
        obj = self.s_temp()
        pre.append(ast.Assign(targets=[ast.Name(id=obj, ctx=ast.Store())], value=t.value))
        if isinstance(t, ast.Attribute):
            load = ast.Attribute(value=ast.Name(id=obj, ctx=ast.Load()), attr=t.attr, ctx=ast.Load())
            store = ast.Attribute(value=ast.Name(id=obj, ctx=ast.Load()), attr=t.attr, ctx=ast.Store())
        else:
            key = self.s_temp()
            sl = t.slice
            if isinstance(sl, ast.Slice):
                sl = s_call("_bmq_slice", [sl.lower or ast.Constant(None), sl.upper or ast.Constant(None),
                                           sl.step or ast.Constant(None)], node)
            pre.append(ast.Assign(targets=[ast.Name(id=key, ctx=ast.Store())], value=sl))
            load = ast.Subscript(value=ast.Name(id=obj, ctx=ast.Load()), slice=ast.Name(id=key, ctx=ast.Load()),
                                 ctx=ast.Load())
            store = ast.Subscript(value=ast.Name(id=obj, ctx=ast.Load()), slice=ast.Name(id=key, ctx=ast.Load()),
                                  ctx=ast.Store())
        pre.append(ast.Assign(targets=[store], value=s_call(name, [load, node.value], node)))
        return [ast.copy_location(p, node) for p in pre]


def s_rewrite(tree):
    tree = s_SizeRewrite().visit(tree)
    return ast.fix_missing_locations(tree)


# ---------------------------------------------------------------------------- after the run (issue 23)
# What a script must not leave in the scene, checked in the sandbox and live alike right after
# it ran (live: before the commit, so the change is rolled back): node types that write files
# when the scene renders, simulations whose caches Blender writes when a frame changes, and data
# too big for the link (one ID property string or bytes over MAX_PROP_BYTES).

HOST_WRITE_MODIFIERS = frozenset({"FLUID", "CLOTH", "DYNAMIC_PAINT", "SMOKE", "FLUID_SIMULATION"})


def s_trees(bpy):
    for name in ("scenes", "materials", "worlds", "lights", "textures", "node_groups", "linestyles"):
        for idb in getattr(bpy.data, name):
            tree = idb if name == "node_groups" else getattr(idb, "node_tree", None)
            if tree is not None:
                yield "%s:%s" % (type(idb).__name__, idb.name), tree


def s_big_props(owner, where, out, depth=0):
    try:
        keys = list(owner.keys())
    except Exception:
        return
    for k in keys[:10000]:
        v = owner[k]
        if isinstance(v, (_real_str, _real_bytes)) and len(v) > MAX_PROP_BYTES:
            out.add("too big: the custom property %s[%r] holds %d bytes (at most %d)"
                    % (where, k[:60], len(v), MAX_PROP_BYTES))
        elif hasattr(v, "keys") and depth < 8:
            s_big_props(v, "%s[%r]" % (where, k[:60]), out, depth + 1)
        elif hasattr(v, "__len__") and not isinstance(v, (_real_str, _real_bytes)):
            try:
                n = len(v)
            except Exception:
                n = 0
            if n * 8 > MAX_PROP_BYTES:
                out.add("too big: the custom property %s[%r] holds %d items" % (where, k[:60], n))


def hazards():
    """The set of things in the scene that write on the host or are too big for the link."""
    import bpy
    out = set()
    for where, tree in s_trees(bpy):
        for node in tree.nodes:
            if "OutputFile" in node.bl_idname:
                out.add("host write: %s has a %s node %r (it writes files when the scene renders)"
                        % (where, node.bl_idname, node.name))
    for o in bpy.data.objects:
        for m in o.modifiers:
            if m.type in HOST_WRITE_MODIFIERS:
                out.add("host write: object %r has a %s modifier (its cache is written to disk)" % (o.name, m.type))
        for ps in getattr(o, "particle_systems", ()):
            if ps.point_cache.use_disk_cache:
                out.add("host write: object %r caches particles on disk" % o.name)
    for attr in dir(bpy.data):
        coll = getattr(bpy.data, attr, None)
        if attr.startswith("_") or not isinstance(coll, bpy.types.bpy_prop_collection):
            continue
        for idb in coll:
            if isinstance(idb, bpy.types.ID):
                s_big_props(idb, "%s:%s" % (type(idb).__name__, idb.name), out)
    return out


def topology():
    """{mesh name: (vertices, edges, faces)} of every mesh: what canonical_after compares."""
    import bpy
    return {m.name: (len(m.vertices), len(m.edges), len(m.polygons)) for m in bpy.data.meshes if m.library is None}


def s_sort_seq(seq):
    """Sort bmesh edges or faces by their vertices' indices (sort() takes a number: the rank)."""
    seq.index_update()
    keys = [(tuple(sorted(v.index for v in el.verts)), el.index) for el in seq]
    rank = {index: r for r, (_key, index) in enumerate(sorted(keys))}
    seq.sort(key=lambda el: rank[el.index])


CANONICAL_MAX_EDGES = 100000    # sorting costs Python time per element: larger meshes are left as made


def canonical_after(before):
    """Meshes the script made, or whose topology it changed, with their edges (and, for new
    meshes, their faces) in one order that depends on their vertices only. bmesh operators
    (extrude_face_region, remove_doubles...) order what they make through pointer-keyed maps, so
    the same script gives a different edge order in every process: a coin for a script that
    indexes them, and a divergence for the fingerprint (issue 23). The same in the sandbox and
    live; a mesh whose topology the script left alone is not touched. Returns the names."""
    import bmesh
    import bpy
    done = []
    for name, counts in sorted(topology().items()):
        if before.get(name) == counts:
            continue
        mesh = bpy.data.meshes.get(name)
        if mesh is None or mesh.is_editmode or len(done) >= 64 or len(mesh.edges) > CANONICAL_MAX_EDGES:
            continue                # a bigger one is left as made: the fingerprint check still sees a difference
        bm = bmesh.new()
        try:
            bm.from_mesh(mesh)
            bm.verts.index_update()
            s_sort_seq(bm.edges)
            if name not in before:
                s_sort_seq(bm.faces)
            bm.to_mesh(mesh)
        finally:
            bm.free()
        s_orient_edges(mesh)
        mesh.update()
        done.append(name)
    return done


def s_orient_edges(mesh):
    """Every edge from its lower vertex to its higher one (creation order set it before)."""
    import array
    pairs = array.array("i", [0]) * (2 * len(mesh.edges))
    mesh.edges.foreach_get("vertices", pairs)
    for i in range(0, len(pairs), 2):
        if pairs[i] > pairs[i + 1]:
            pairs[i], pairs[i + 1] = pairs[i + 1], pairs[i]
    mesh.edges.foreach_set("vertices", pairs)


def settle():
    """Evaluate the depsgraph, so that what it derives (an auto texture space after vertices
    moved...) is settled before a fingerprint: the sandbox and live fingerprint the same moment.
    Animation too, at the current frame: Blender 4.x evaluates it when a file loads, so the
    sandbox's copy holds the animated values a live scene only gets at a frame change (issue 30)."""
    import bpy
    scene = bpy.context.scene
    if scene is not None:
        scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)
    for scene in bpy.data.scenes:
        for layer in scene.view_layers:
            layer.update()


def check_after(before):
    """The hazards the script added (a sorted list of messages; empty: none)."""
    return sorted(hazards() - before)[:20]


# ---------------------------------------------------------------------------- prepare

def s_compile(source, flags):
    try:
        return compile(source, "<script>", "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        line = getattr(e, "lineno", None)
        raise ScriptRefused("the script does not compile%s: %s"
                            % (" (line %s)" % line if line else "", getattr(e, "msg", None) or e))
    except (MemoryError, RecursionError) as e:
        raise ScriptRefused("the script is too complex to compile (%s)" % type(e).__name__)


def prepare(source, sha256=None, modules=None, builtins=None):
    """(code, globals) for run(), or ScriptRefused: nothing has run.

    Every call builds the script's world anew (issue 23: no coin between the sandbox and live,
    nothing left from one script to the next): fresh module facades, a random generator and
    mathutils.noise seeded from the script's sha256, builtins whose repr / str show no
    addresses, and the size guards the rewritten AST calls."""
    check_source(source)
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if sha256 is not None:
        if not isinstance(sha256, str):
            raise ScriptRefused("sha256 must be a hex string")
        if digest != sha256.lower():
            raise ScriptRefused("the script is not the one that was checked (sha256 mismatch)")
    tree = s_compile(source, ast.PyCF_ONLY_AST)
    s_check_code(s_compile(source, 0), allowed=ANNOTATION_NAMES - s_source_strings(tree))
    s_HandlerCheck().visit(tree)
    s_check_strings(tree)
    try:
        code = compile(s_rewrite(tree), "<script>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise ScriptRefused("the script is too complex to compile (%s)" % type(e).__name__)
    mods = s_narrow(modules, MODULES, "modules")
    allowed = s_narrow(builtins, BUILTINS, "builtins")
    guarded = s_guarded_builtins()
    restricted = {name: guarded.get(name, getattr(_builtins_module, name)) for name in sorted(allowed)
                  if hasattr(_builtins_module, name)}
    seed = int(digest[:16], 16)             # the same script draws the same numbers in the sandbox and live
    facades = s_build_all(mods, seed, s_math_guards())
    s_seed_noise(seed)
    restricted.update(GUARDS)
    restricted["__import__"] = s_guarded_import(facades)
    return code, {"__name__": "__main__", "__builtins__": restricted}


def s_seed_noise(seed):
    """mathutils.noise: its seed is process state an earlier script may have set."""
    try:
        import mathutils.noise
    except ImportError:
        return
    mathutils.noise.seed_set(seed % 2147483647 or 1)


# denied_string_words of proto/script_rules.json: a str constant holding one names a type that
# writes files on the host (the validator's rule host_write).
DENIED_STRING_WORDS = _rules.DENIED_STRING_WORDS


def s_check_strings(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for word in DENIED_STRING_WORDS:
                if word in node.value:
                    raise ScriptRefused("line %s: the string %r names a type that writes files on the host"
                                        % (getattr(node, "lineno", "?"), node.value[:60]))


def canonical_dump(node):
    """ast.dump's text with every field that is None or [] left out: the same text for the
    same program on Python 3.11 to 3.14 (3.13's ast.dump leaves them out, 3.11's shows the
    empty lists, 3.12 added type_params). The validator's copy: script_validator.c
    S_CANONICAL_DUMP (issue 30)."""
    if isinstance(node, ast.AST):
        parts = []
        for name in node._fields:
            value = getattr(node, name, None)
            if value is None or (isinstance(value, list) and not value):
                continue
            parts.append("%s=%s" % (name, canonical_dump(value)))
        return "%s(%s)" % (type(node).__name__, ", ".join(parts))
    if isinstance(node, list):
        return "[%s]" % ", ".join(canonical_dump(x) for x in node)
    return repr(node)


def ast_dump(source):
    """canonical_dump of exactly the compile prepare() does, with PyCF_ONLY_AST."""
    check_source(source)
    return canonical_dump(s_compile(source, ast.PyCF_ONLY_AST))


# ---------------------------------------------------------------------------- run

# Own prototypes (ctypes.pythonapi's shared function objects are left as they are): one that
# raises an exception class, one that clears with NULL.
_SET_ASYNC = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi))
_CLEAR_ASYNC = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi))


def s_async(thread_id, exc):
    """Raise exc (a class) in thread thread_id at its next bytecode check; None clears."""
    if exc is None:
        return _CLEAR_ASYNC(ctypes.c_ulong(thread_id), None)
    return _SET_ASYNC(ctypes.c_ulong(thread_id), ctypes.py_object(exc))


# The harder stop (issue 29). An exception raised asynchronously lands where the script is, and a
# script that catches BaseException in a loop (or whose handler loops) catches every one of them.
# So a script still running ESCALATE_S after it was told to stop gets a line tracer, installed on
# its own (main) thread by a pending call: at each line it asks whether any handler of the
# script's frames covers where they are (the code's exception table, Python 3.11+), and raises
# only where none does, so the exception leaves the script whatever it catches. (Before 3.11 it
# raises at every line.) A C-level call that never returns is not stopped by anything here: the
# executor's link gives up on it (the add-on rolls back when the link drops).
_PENDING_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
try:
    _ADD_PENDING = ctypes.pythonapi.Py_AddPendingCall
    _ADD_PENDING.argtypes, _ADD_PENDING.restype = [_PENDING_FN, ctypes.c_void_p], ctypes.c_int
except AttributeError:
    _ADD_PENDING = None
_PENDING_KEPT = []              # the callbacks of recent runs: one may still be queued when run() returns
_HANDLERS = {}                  # code object → [(start, end)] of its exception table (bytes)


def s_handler_ranges(code):
    ranges = _HANDLERS.get(code)
    if ranges is None:
        try:
            ranges = [(e.start, e.end) for e in dis._parse_exception_table(code)]
        except Exception:       # no exception table (before 3.11): no range known
            ranges = []
        if len(_HANDLERS) > 4096:
            _HANDLERS.clear()
        _HANDLERS[code] = ranges
    return ranges


def s_handled(frame):
    """Could a handler of the script's frames (this one and its script callers) catch an
    exception raised here?"""
    while frame is not None and frame.f_code.co_filename == "<script>":
        lasti = frame.f_lasti
        if any(a <= lasti < b for a, b in s_handler_ranges(frame.f_code)):
            return True
        frame = frame.f_back
    return False


class s_Tail(io.TextIOBase):
    """Captured prints: only the last OUTPUT_MAX characters are kept."""

    def __init__(self):
        super().__init__()
        self.parts, self.size = [], 0

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str")
        self.parts.append(s)
        self.size += len(s)
        if self.size > 2 * OUTPUT_MAX:
            text = "".join(self.parts)[-OUTPUT_MAX:]
            self.parts, self.size = [text], len(text)
        return len(s)

    def getvalue(self):
        return "".join(self.parts)[-OUTPUT_MAX:]


def run(code, glob, timeout_ms, cancelled=None):
    """exec(code, glob) on this thread (Blender's main thread), prints captured, stopped by
    ScriptTimeout after timeout_ms, or by ScriptCancelled once cancelled() (asked on the
    watchdog's thread every CANCEL_POLL_S; it must be thread-safe and must not block) says
    yes. Either is raised again every TIMEOUT_REPEAT_S until the script is gone, and the time
    limit holds for a cancelled script too. Returns {"failure": exception or None,
    "timed_out", "cancelled", "cancel_ms" (from the start to the cancel, or None),
    "duration_ms", "output"}. When it returns, the watchdog is gone and nothing is pending."""
    if not isinstance(timeout_ms, (int, float)) or isinstance(timeout_ms, bool) or not timeout_ms > 0:
        raise ValueError("timeout_ms must be a positive number")
    thread_id = threading.get_ident()
    stop = threading.Event()
    fired, cancels = [], []
    halt = {"exc": None, "done": False}     # the harder stop: the class the line tracer raises

    def on_line(frame, event, arg):
        exc = halt["exc"]
        if exc is not None and not halt["done"] and event == "line" and not s_handled(frame):
            raise exc("the script was stopped")
        return on_line

    def on_call(frame, event, arg):
        return on_line if frame.f_code.co_filename == "<script>" else None

    def arm(_arg):              # a pending call: on the script's thread, between two bytecodes
        try:
            if halt["exc"] is not None and not halt["done"]:
                sys.settrace(on_call)
                f = sys._getframe(1)
                while f is not None:
                    if f.f_code.co_filename == "<script>":
                        f.f_trace = on_line
                    f = f.f_back
        except BaseException:
            pass
        return 0

    try:
        arm_cb = _PENDING_FN(arm) if _ADD_PENDING is not None else None
    except (MemoryError, OSError):      # no executable memory for the callback: the time limit alone
        arm_cb = None
    _PENDING_KEPT.append(arm_cb)
    del _PENDING_KEPT[:-64]
    saved_trace = sys.gettrace()

    def watchdog():
        limit = time.perf_counter() + timeout_ms / 1000.0
        ask = cancelled
        while not cancels:
            left = limit - time.perf_counter()
            if left <= 0:
                break
            if stop.wait(min(left, CANCEL_POLL_S) if ask is not None else left):
                return
            if ask is not None and time.perf_counter() < limit:
                try:
                    if ask():
                        cancels.append(time.perf_counter())
                except Exception as e:      # a broken hook must not end the watchdog: the limit holds
                    print("blendmq: the cancel check failed: %s: %s" % (type(e).__name__, e), file=sys.__stderr__)
                    ask = None
        first = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            late = now >= limit
            (fired if late else cancels).append(now)
            s_async(thread_id, ScriptTimeout if late else ScriptCancelled)
            if now - first >= ESCALATE_S and arm_cb is not None:
                halt["exc"] = ScriptTimeout if late else ScriptCancelled
                _ADD_PENDING(arm_cb, None)
            if stop.wait(TIMEOUT_REPEAT_S if late else min(TIMEOUT_REPEAT_S, max(0.001, limit - time.perf_counter()))):
                return

    out = s_Tail()
    saved = sys.stdout, sys.stderr
    failure = None
    dog = threading.Thread(target=watchdog, name="blendmq-script-watchdog", daemon=True)
    t0 = time.perf_counter()
    sys.stdout = sys.stderr = out
    try:
        dog.start()
        exec(code, glob)
    except BaseException as exc:            # SystemExit, ScriptTimeout too: nothing escapes
        failure = exc
    # Stop the watchdog, wait for it, then clear a timeout it may have raised too late: a
    # late one may still land anywhere in here (even inside join), so repeat until all three
    # were done in one go. Once the watchdog thread has ended nothing new can be raised.
    while True:
        try:
            stop.set()
            if dog.ident is not None:
                dog.join()
            s_async(thread_id, None)
            halt["done"] = True         # an arm still queued does nothing now
            if halt["exc"] is not None:
                sys.settrace(saved_trace)
            break
        except ScriptTimeout as exc:
            if failure is None:
                failure = exc
    ms = (time.perf_counter() - t0) * 1000.0
    sys.stdout, sys.stderr = saved
    timed_out, was_cancelled = bool(fired), bool(cancels)
    if was_cancelled and not timed_out and not isinstance(failure, ScriptCancelled):
        # cancelled; whatever the script did or raised in the meantime, the cancel stopped it
        late = ScriptCancelled("the script was cancelled")
        late.__context__ = failure
        failure = late
    elif timed_out and (not isinstance(failure, ScriptTimeout) or isinstance(failure, ScriptCancelled)):
        # the limit was reached; whatever the script did or raised in the meantime, it was
        # stopped by the timeout
        late = ScriptTimeout("the script ran longer than %d ms" % timeout_ms)
        late.__context__ = failure
        failure = late
    return {"failure": failure, "timed_out": timed_out, "cancelled": was_cancelled,
            "cancel_ms": (cancels[0] - t0) * 1000.0 if cancels else None, "duration_ms": ms, "output": out.getvalue()}


# ---------------------------------------------------------------------------- errors

def format_error(exc, source):
    """(traceback text, {"type", "message", "line"}): frames of "<script>" only."""
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace")
    source_lines = (source or "").splitlines()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<script>"]
    lines = ["Traceback (most recent call last):"]
    for f in frames:
        lines.append('  line %d, in %s' % (f.lineno or 0, f.name))
        if f.lineno and 0 < f.lineno <= len(source_lines):
            lines.append("    " + source_lines[f.lineno - 1].strip())
    lines.extend(traceback.format_exception_only(type(exc), exc))
    line = frames[-1].lineno if frames else getattr(exc, "lineno", None)
    return ("\n".join(l.rstrip("\n") for l in lines)[-4000:],
            {"type": type(exc).__name__, "message": str(exc)[:1000], "line": line})
