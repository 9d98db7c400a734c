"""commands — the command table and the one place a request becomes a reply (both runtimes)."""
import builtins
import io
import json
import sys
import time
import traceback

from .args import CommandError
from .bench import cmd_bench_direct
from .protocol import MAX_BLOB, MAX_JSON
from .render import cmd_render_preview, cmd_save_blend, cmd_viewport_screenshot
from .rna import cmd_rna_info
from .scene import cmd_object_info, cmd_reset_scene, cmd_scene_info
from .steps import cmd_run_step
from .transaction import TXN, cmd_plan_begin, cmd_plan_commit, cmd_plan_rollback


class s_Flags:
    shutdown = False


def cmd_ping(args):
    return {"pong": True}, None


def cmd_shutdown(args):
    s_Flags.shutdown = True
    return {}, None


# ---------------------------------------------------------------------------- run_script (issue 8)
# A BPY script the validator sealed, the sandbox ran clean on a copy of this scene and a person
# confirmed: run it live with the same run-time allowlists as services/executor/sandbox/
# sandbox_runner.py (s_restricted and s_script_error are copied from there), inside a plan
# transaction: an exception rolls back what the script created and touched.

REAL_IMPORT = builtins.__import__
SCRIPT_MAX = 1 << 20
TOUCH_MAX = 500             # existing objects saved for a rollback (transforms, meshes, slots)


def s_restricted(modules, allowed):
    safe = {name: getattr(builtins, name) for name in allowed if hasattr(builtins, name)}

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level != 0 or name.split(".")[0] not in modules:
            raise ImportError("import of %r is not allowed" % name)
        return REAL_IMPORT(name, globals, locals, fromlist, level)

    safe["__import__"] = guarded_import
    return safe


def s_script_error(exc, source_lines):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<script>"]
    lines = ["Traceback (most recent call last):"]
    for f in frames:
        lines.append('  line %d, in %s' % (f.lineno, f.name))
        if 0 < f.lineno <= len(source_lines):
            lines.append("    " + source_lines[f.lineno - 1].strip())
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "\n".join(l.rstrip("\n") for l in lines)[-4000:]


def s_names(value, what):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CommandError("%s must be a list of names" % what)
    return set(value)


def cmd_run_script(args):
    import bpy
    script, plan_id = args.get("script"), args.get("plan_id")
    if not isinstance(script, str) or not script or len(script) > SCRIPT_MAX:
        raise CommandError("script must be a non-empty string of at most %d bytes" % SCRIPT_MAX)
    modules, allowed = s_names(args.get("modules"), "modules"), s_names(args.get("builtins"), "builtins")
    code = compile(script, "<script>", "exec", dont_inherit=True)
    cmd_plan_begin({"plan_id": plan_id})
    for o in list(bpy.data.objects)[:TOUCH_MAX]:
        TXN.current.touch(o)
    before = set(bpy.data.objects.keys())
    glob = {"__name__": "__main__", "__builtins__": s_restricted(modules, allowed)}
    out = io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    failure = None
    t0 = time.perf_counter()
    try:
        exec(code, glob)
    except BaseException as exc:            # SystemExit too: nothing escapes
        failure = exc
    finally:
        sys.stdout, sys.stderr = saved
    ms = (time.perf_counter() - t0) * 1000.0
    if failure is not None:
        tb = s_script_error(failure, script.splitlines())
        try:
            cmd_plan_rollback({"plan_id": plan_id})
        except CommandError:
            pass
        raise CommandError("the script failed live and was rolled back:\n" + tb)
    cmd_plan_commit({"plan_id": plan_id})
    created = sorted(n for n in bpy.data.objects.keys() if n not in before)
    return {"plan_id": plan_id, "objects_created": created[:500], "duration_ms": ms,
            "output": out.getvalue()[-4000:]}, None


COMMANDS = {
    "ping": cmd_ping, "run_step": cmd_run_step, "scene_info": cmd_scene_info,
    "object_info": cmd_object_info, "reset_scene": cmd_reset_scene,
    "render_preview": cmd_render_preview, "save_blend": cmd_save_blend,
    "viewport_screenshot": cmd_viewport_screenshot,
    "shutdown": cmd_shutdown,
    "bench_direct": cmd_bench_direct,
    "plan_begin": cmd_plan_begin, "plan_commit": cmd_plan_commit, "plan_rollback": cmd_plan_rollback,
    "rna_info": cmd_rna_info,
    "run_script": cmd_run_script,
}

# Commands that change nothing in the scene (a GUI Blender may answer them from its snapshot).
READ_ONLY = frozenset(("scene_info", "object_info"))


def handle_request(req, arrival, table=None):
    """Run one request (on the main thread, unless `table` holds functions that need no bpy).
    Returns (reply, blob)."""
    rid = req.get("id")
    if not isinstance(rid, int) or isinstance(rid, bool):
        return {"id": 0, "ok": False, "error": "request id must be an integer", "bpy_ms": 0.0}, b""
    cmd, args = req.get("cmd"), req.get("args", {})
    if args is None:
        args = {}
    deadline = req.get("deadline_ms")
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > 0 \
            and time.monotonic() > arrival + deadline / 1000.0:
        return {"id": rid, "ok": False, "error": "deadline exceeded before start", "bpy_ms": 0.0}, b""
    fn = (table if table is not None else COMMANDS).get(cmd) if isinstance(cmd, str) else None
    if fn is None:
        return {"id": rid, "ok": False, "error": "unknown command %s" % str(cmd)[:80], "bpy_ms": 0.0}, b""
    t0 = time.perf_counter()
    try:
        if not isinstance(args, dict):
            raise CommandError("args must be an object")
        result, blob = fn(args)
        reply = {"id": rid, "ok": True, "result": result}
    except CommandError as e:
        reply, blob = {"id": rid, "ok": False, "error": str(e)}, b""
    except Exception as e:          # never let a command take the server down
        reply, blob = {"id": rid, "ok": False, "error": "%s: %s" % (type(e).__name__, e)}, b""
    reply["bpy_ms"] = (time.perf_counter() - t0) * 1000.0
    blob = blob or b""
    if len(blob) > MAX_BLOB:
        reply, blob = {"id": rid, "ok": False, "bpy_ms": reply["bpy_ms"],
                       "error": "reply blob too large (%d bytes)" % len(blob)}, b""
    try:
        if len(json.dumps(reply, allow_nan=False)) > MAX_JSON:
            raise ValueError("reply JSON over 1 MiB")
    except ValueError as e:
        reply, blob = {"id": rid, "ok": False, "bpy_ms": reply["bpy_ms"],
                       "error": "cannot encode reply: %s" % e}, b""
    return reply, blob
