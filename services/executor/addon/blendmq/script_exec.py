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
                                    swallow the timeout), and the restricted globals: fixed
                                    allowlists a request can only narrow, imports answered
                                    with read-only facades of the allowed modules
  run(code, globals, timeout_ms)    exec on the calling (main) thread, prints captured, under a
                                    wall-clock limit enforced by a watchdog thread that raises
                                    ScriptTimeout inside the script
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

# Fixed allowlists (common/script/script_rules.c: s_modules, s_builtins). A request may
# only narrow them.
MODULES = frozenset({"bpy", "bmesh", "mathutils", "math", "random"})

BUILTINS = frozenset({
    "abs", "all", "any", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "frozenset", "hex", "int", "isinstance", "issubclass",
    "iter", "len", "list", "map", "max", "min", "next", "oct", "ord", "pow", "print", "range",
    "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip",
    "Exception", "ArithmeticError", "AssertionError", "AttributeError", "IndexError", "KeyError",
    "LookupError", "NotImplementedError", "OverflowError", "RuntimeError", "StopIteration",
    "TypeError", "ValueError", "ZeroDivisionError",
})

# s_forbidden_builtins of common/script/script_rules.c.
FORBIDDEN_BUILTINS = frozenset({
    "exec", "eval", "compile", "open", "getattr", "setattr", "delattr", "hasattr", "globals", "locals",
    "vars", "dir", "type", "__import__", "breakpoint", "input", "help", "exit", "quit",
    "memoryview", "object", "super", "classmethod", "staticmethod", "property", "format",
    "__build_class__", "__builtins__", "__loader__", "__spec__", "copyright", "credits", "license",
    "BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit",
})

# s_denied_attributes of common/script/script_rules.c.
DENIED_ATTRIBUTES = frozenset({
    # code from strings, persistence and hooks
    "handlers", "timers", "driver_namespace", "drivers", "driver", "driver_add", "driver_remove",
    "as_module", "texts", "text", "execfile", "exec", "eval", "compile", "script", "scripts",
    "register_class", "unregister_class", "register_module", "unregister_module", "msgbus",
    "addons", "addon_utils", "keyconfigs", "preferences", "user_preferences", "use_autopack",
    "use_scripts_auto_execute", "temp_override", "path_resolve", "copy_context",
    # files and processes
    "filepath", "filepath_raw", "filepath_from_user", "filename", "directory", "files", "base_path",
    "file_slots", "file_format", "save", "save_render", "save_as_mainfile", "save_mainfile", "save_userpref",
    "pack", "unpack", "reload", "load", "write", "open", "libraries", "library", "system", "popen",
    "spawn", "fork", "new_movie", "new_sound", "new_image", "cache_directory", "sound", "image_user",
    "use_disk_cache", "use_external", "image_output_path", "output_path", "cache_file", "bake_directory",
    # the UI and window manager
    "window_manager", "windows", "window", "screen", "screens", "area", "region", "workspace",
    # frames, code objects, generators
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "cr_frame", "cr_code", "cr_await",
    "ag_frame", "ag_code", "ag_await", "f_globals", "f_locals", "f_builtins", "f_back", "f_code",
    "f_trace", "f_lasti", "tb_frame", "tb_next", "co_code", "co_consts", "co_names",
    "func_globals", "func_code", "im_func", "im_self", "mro", "modules", "globals", "locals",
    "builtins", "format", "format_map", "exec_module", "import_module", "load_module",
})

DENIED_NAMES = FORBIDDEN_BUILTINS | DENIED_ATTRIBUTES

# Names the compiler itself emits for a docstring or an annotation (compiler temporaries such
# as ".0" start with "." and are allowed too).
COMPILER_NAMES = frozenset({"__doc__", "__annotations__"})

# What each facade holds (None: every public attribute).
FACADE_NAMES = {
    "bpy": ("ops", "data", "context"),
    "bmesh": ("new", "ops", "types", "utils", "geometry", "from_edit_mesh", "update_edit_mesh"),
    "mathutils": None,
    "math": None,
    "random": None,          # further limited to public functions and classes (see s_build)
}

OUTPUT_MAX = 64 * 1024       # the tail of the script's prints that is kept
TIMEOUT_REPEAT_S = 0.1       # the watchdog raises again this often until the script is gone

_COOKIE_LINE = re.compile(r"^[ \t\f]*#")
_COOKIE = re.compile(r"coding[:=][ \t]*([-\w.]+)")
_COOKIE_CPYTHON = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class ScriptRefused(Exception):
    """The script is refused before anything runs; the text is the reason, for the user."""


class ScriptTimeout(BaseException):
    """Raised inside the script by the watchdog: the script ran past its time limit."""


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


def s_check_const(value, where, depth=0):
    if isinstance(value, str):
        if s_is_dunder(value):
            raise ScriptRefused("%s: the string %r is not allowed" % (where, value[:60]))
    elif isinstance(value, (tuple, frozenset)):
        if depth > 50:
            raise ScriptRefused("%s: constants nested too deep" % where)
        for v in value:
            s_check_const(v, where, depth + 1)
    elif isinstance(value, types.CodeType):
        s_check_code(value, depth + 1)


def s_check_code(code, depth=0):
    """Every code object, recursively: names and constants."""
    if depth > 200:
        raise ScriptRefused("code nested too deep")
    where = "line %s" % code.co_firstlineno
    for field in (code.co_names, code.co_varnames, code.co_cellvars, code.co_freevars):
        for name in field:
            if s_private(name):
                raise ScriptRefused("%s: the name %r is not allowed" % (where, str(name)[:60]))
    for field in (code.co_varnames, code.co_cellvars, code.co_freevars):     # bound names
        for name in field:
            if name in FORBIDDEN_BUILTINS:
                raise ScriptRefused("%s: the name %r is not allowed" % (where, name))
    denied = DENIED_NAMES.intersection(code.co_names)
    if denied:
        s_check_uses(code, denied, where)
    for const in code.co_consts:
        s_check_const(const, where, depth)


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


# Operators (s_op_categories, s_denied_ops, s_denied_op_words of common/script/
# script_rules.c): bpy.ops in a script shows these categories only, without the denied
# operators (the static validator refuses the rest; this is the same rule at run time).
OP_CATEGORIES = frozenset({
    "mesh", "object", "transform", "curve", "material", "collection", "uv", "texture", "world"})
DENIED_OPS = frozenset({
    "object.bake", "object.bake_image", "object.ocean_bake", "object.multires_external_save",
    "object.multires_external_pack", "object.load_background_image", "object.load_reference_image",
    "object.volume_import", "object.drop_named_image", "object.collection_external_asset_drop",
    "object.lineart_bake_strokes", "object.lineart_bake_strokes_all", "uv.export_layout"})
DENIED_OP_WORDS = ("export", "import", "save", "load", "bake", "external", "script", "driver", "reload",
                   "file", "url", "addon", "pref", "open", "exec", "run")


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


class s_Delegate(s_Facade):
    """A read-only view of a module whose attributes appear on demand (bpy.ops and its
    categories): public names that `allow` lets through, submodules again as views."""

    def __getattr__(self, name):
        d = self.__dict__
        if name.startswith("_") or not d["_s_allow"](name):
            raise AttributeError("%s.%s is not allowed" % (d["_s_real"].__name__, name))
        value = getattr(d["_s_real"], name)
        if isinstance(value, types.ModuleType):
            cache = d["_s_cache"]
            if name not in cache:
                cache[name] = s_delegate(value, s_allow_operator(name))
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
# seeded from the script's sha256 at every prepare(); seed() / seed(None) and Random() fall back
# to that seed, never to the OS's entropy, and SystemRandom is not offered. So "random" cannot
# be a coin that lands one way in the sandbox and the other way live. (Other differences
# between two processes remain: str hashes are salted per process, so the order of a set of
# strings can differ; see the closing note of issue 11.)
_SEED = [0]


def s_seed_of(a):
    return _SEED[0] if a is None else a


def s_random_namespace(real):
    class Random(real.Random):
        """random.Random whose default seed is the script's, not the OS's entropy."""

        def __init__(self, x=None):
            super().__init__(s_seed_of(x))

        def seed(self, a=None, version=2):
            super().seed(s_seed_of(a), version)

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
    _RNG[0] = rng
    return ns


_RNG = [None]


def s_build(root):
    real = importlib.import_module(root)
    names = FACADE_NAMES.get(root)
    if names is None:
        names = [n for n in dir(real) if not n.startswith("_")]
    if root == "random":
        ns = s_random_namespace(real)
        return s_facade_of(ns, [n for n in vars(ns) if not n.startswith("_")])
    return s_facade_of(real, names)


_FACADES = {}
_FACADES_LOCK = threading.Lock()


def facade(root):
    """The facade of an allowed module, built once per process."""
    if root not in MODULES:
        raise ImportError("import of %r is not allowed" % root)
    f = _FACADES.get(root)
    if f is None:
        with _FACADES_LOCK:
            f = _FACADES.get(root)
            if f is None:
                f = _FACADES[root] = s_build(root)
    return f


def s_guarded_import(modules):
    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level != 0 or not isinstance(name, str) or not name:
            raise ImportError("relative imports are not allowed")
        parts = name.split(".")
        if parts[0] not in modules:
            raise ImportError("import of %r is not allowed" % name)
        root = facade(parts[0])
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
    """(code, globals) for run(), or ScriptRefused: nothing has run."""
    check_source(source)
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if sha256 is not None:
        if not isinstance(sha256, str):
            raise ScriptRefused("sha256 must be a hex string")
        if digest != sha256.lower():
            raise ScriptRefused("the script is not the one that was checked (sha256 mismatch)")
    code = s_compile(source, 0)
    s_check_code(code)
    s_HandlerCheck().visit(s_compile(source, ast.PyCF_ONLY_AST))
    mods = s_narrow(modules, MODULES, "modules")
    allowed = s_narrow(builtins, BUILTINS, "builtins")
    restricted = {name: getattr(_builtins_module, name) for name in sorted(allowed)
                  if hasattr(_builtins_module, name)}
    for root in sorted(mods):               # built now (once per process), not inside the script's time
        try:
            facade(root)
        except ImportError:
            pass                            # not in this Python (no Blender): refused at import time
    _SEED[0] = int(digest[:16], 16)         # the same script draws the same numbers in the sandbox and live
    if _RNG[0] is not None:
        _RNG[0].seed()
    restricted["__import__"] = s_guarded_import(frozenset(mods))
    return code, {"__name__": "__main__", "__builtins__": restricted}


def ast_dump(source):
    """ast.dump of exactly the compile prepare() does, with PyCF_ONLY_AST."""
    check_source(source)
    return ast.dump(s_compile(source, ast.PyCF_ONLY_AST))


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


def run(code, glob, timeout_ms):
    """exec(code, glob) on this thread (Blender's main thread), prints captured, stopped by
    ScriptTimeout after timeout_ms. Returns {"failure": exception or None, "timed_out",
    "duration_ms", "output"}. When it returns, the watchdog is gone and nothing is pending."""
    if not isinstance(timeout_ms, (int, float)) or isinstance(timeout_ms, bool) or not timeout_ms > 0:
        raise ValueError("timeout_ms must be a positive number")
    thread_id = threading.get_ident()
    stop = threading.Event()
    fired = []

    def watchdog():
        if stop.wait(timeout_ms / 1000.0):
            return
        while not stop.is_set():
            fired.append(time.perf_counter())
            s_async(thread_id, ScriptTimeout)
            if stop.wait(TIMEOUT_REPEAT_S):
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
            break
        except ScriptTimeout as exc:
            if failure is None:
                failure = exc
    ms = (time.perf_counter() - t0) * 1000.0
    sys.stdout, sys.stderr = saved
    timed_out = bool(fired)
    if timed_out and not isinstance(failure, ScriptTimeout):
        # the limit was reached; whatever the script did or raised in the meantime, it was
        # stopped by the timeout
        late = ScriptTimeout("the script ran longer than %d ms" % timeout_ms)
        late.__context__ = failure
        failure = late
    return {"failure": failure, "timed_out": timed_out, "duration_ms": ms, "output": out.getvalue()}


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
