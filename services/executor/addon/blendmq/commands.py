"""commands — the command table and the one place a request becomes a reply (both runtimes)."""
import json
import time

from .args import CommandError
from .bench import cmd_bench_direct
from .protocol import MAX_BLOB, MAX_JSON
from .render import cmd_render_preview, cmd_save_blend, cmd_viewport_screenshot
from .rna import cmd_rna_info
from .scene import cmd_object_info, cmd_reset_scene, cmd_scene_info
from .steps import cmd_run_step
from .transaction import cmd_plan_begin, cmd_plan_commit, cmd_plan_rollback


class s_Flags:
    shutdown = False


def cmd_ping(args):
    return {"pong": True}, None


def cmd_shutdown(args):
    s_Flags.shutdown = True
    return {}, None


COMMANDS = {
    "ping": cmd_ping, "run_step": cmd_run_step, "scene_info": cmd_scene_info,
    "object_info": cmd_object_info, "reset_scene": cmd_reset_scene,
    "render_preview": cmd_render_preview, "save_blend": cmd_save_blend,
    "viewport_screenshot": cmd_viewport_screenshot,
    "shutdown": cmd_shutdown,
    "bench_direct": cmd_bench_direct,
    "plan_begin": cmd_plan_begin, "plan_commit": cmd_plan_commit, "plan_rollback": cmd_plan_rollback,
    "rna_info": cmd_rna_info,
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
