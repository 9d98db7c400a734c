"""commands — the command table and the one place a request becomes a reply (both runtimes).

The commands, their arguments and their flags are declared in proto/blender_link.json
(link_proto.COMMANDS, generated): the table below must implement exactly those (checked at
import: a command implemented but not declared, or declared but not implemented, stops the
add-on from loading), and every request's arguments are checked against their declared types
and limits before its function runs."""
import json
import re
import time

from . import bounds, durable, fingerprint, link_proto, script_exec
from . import server as link_server
from .args import CommandError
from .asset_stage import cmd_asset_stage
from .bench import cmd_bench_direct
from .look import cmd_look
from .protocol import MAX_BLOB, MAX_JSON
from .render import cmd_render_preview, cmd_save_blend, cmd_viewport_screenshot
from .rna import cmd_rna_info
from .scene import REVISION, cmd_object_info, cmd_reset_scene, cmd_scene_info, cmd_scene_names
from .steps import cmd_run_step
from .plan_run import CANCELS, PlanRun, cancel, cmd_cancel_plan, cmd_run_plan
from .transaction import TXN, cmd_interrupted_ack, cmd_plan_begin, cmd_plan_commit, cmd_plan_rollback

script_exec.OP_FILTER = True        # live: bpy.ops shows only the allowed categories and operators
script_exec.OP_BOUNDS[0] = lambda: bounds.s_Palette.bounds      # live: the palette's int bounds (hello)


class s_Flags:
    shutdown = False


def cmd_ping(args):
    return {"pong": True}, None


def cmd_shutdown(args):
    s_Flags.shutdown = True
    return {}, None


FP_IDS_MAX, FP_IDS_BYTES = 5000, 512 * 1024


def cmd_fingerprint(args):
    """fingerprint {full?}: the scene's deep digest (fingerprint.py); with full, the digest of
    each ID too (cut at FP_IDS_MAX entries or FP_IDS_BYTES: truncated says so)."""
    fp = fingerprint.compute(props=False)
    out = {"digest": fp["digest"], "count": fp["count"], "ms": fp["ms"]}
    if args.get("full"):
        ids, size = {}, 0
        for key in sorted(fp["ids"]):
            size += len(key) + 40
            if len(ids) >= FP_IDS_MAX or size > FP_IDS_BYTES:
                break
            ids[key] = fp["ids"][key]["digest"]
        out["ids"], out["truncated"] = ids, len(ids) < fp["count"]
    return out, None


def cmd_run_step_committed(args):
    """run_step: inside a plan, one step of it; outside one (a direct call), a change of its
    own, committed (durably with --state-dir) before the reply."""
    result, blob = cmd_run_step(args)
    if TXN.current is None:
        result["fingerprint"] = durable.commit("run_step")
    return result, blob


# ---------------------------------------------------------------------------- run_script (issue 8)
# A BPY script the validator sealed, the sandbox ran clean on a copy of this scene and a person
# confirmed: run it live through script_exec (the one run-time guard, shared with services/
# executor/sandbox/sandbox_runner.py), inside a plan transaction: an exception or the time
# limit rolls back what the script created and touched. The script must be exactly the one
# that was checked (its sha256 is required) and the request may only narrow the fixed
# allowlists: a request naming anything outside them is refused (issue 12).

SCRIPT_MAX = 1 << 20
TOUCH_MAX = 500             # existing objects saved for a rollback (transforms, meshes, slots)
TIMEOUT_DEFAULT_MS, TIMEOUT_MIN_MS, TIMEOUT_MAX_MS = 20000, 100, 600000
SHA256_HEX = re.compile(r"[0-9a-fA-F]{64}")


def s_names(value, fixed, what):
    """None: the fixed list; otherwise a list of names within `fixed` (script_exec narrows to
    it). A request that names anything outside the add-on's own allowlist is refused, not
    silently narrowed: the executor and the add-on disagree, and that is worth an error."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CommandError("%s must be a list of names" % what)
    wider = sorted(set(value) - set(fixed))
    if wider:
        raise CommandError("refused: the request's %s allowlist is wider than the add-on's: %s not allowed "
                           "(allowed: %s)" % (what, ", ".join(n[:60] for n in wider[:20]), ", ".join(sorted(fixed))))
    return value


def s_timeout_ms(args):
    v = args.get("timeout_ms", TIMEOUT_DEFAULT_MS)
    if v is None:
        v = TIMEOUT_DEFAULT_MS
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v != v:
        raise CommandError("timeout_ms must be a number of milliseconds")
    return int(min(max(v, TIMEOUT_MIN_MS), TIMEOUT_MAX_MS))


def s_rollback(plan_id):
    """Roll the script's transaction back; a note for the answer (exact or not)."""
    try:
        out, _ = cmd_plan_rollback({"plan_id": plan_id})
    except CommandError as e:
        return "rollback: %s" % e
    if isinstance(out, dict) and "exact" in out:
        return "restored exactly" if out.get("exact") else "restored (not exactly: %s)" % str(out.get("fingerprint"))[:80]
    return "rolled back"


SCRIPT_RUNNING = [None]     # the plan_id of the run_script running now (cancel_plan's answer says running)


def s_undone(plan_id):
    """Roll a cancelled script's transaction back (issue 29); what the answer says of it: the
    objects it made that were removed, and whether the scene's fingerprint is the one before."""
    try:
        out, _ = cmd_plan_rollback({"plan_id": plan_id})
    except CommandError as e:
        return "not rolled back: %s" % e
    removed = list(out.get("removed") or []) if isinstance(out, dict) else []
    names = ", ".join(n[:60] for n in removed[:8]) + (", …" if len(removed) > 8 else "")
    exact = isinstance(out, dict) and out.get("exact")
    return "rolled back: removed %d object(s) the script made%s; %s" % (
        len(removed), " (%s)" % names if removed else "",
        "the scene's fingerprint equals the one before" if exact
        else "not exactly (fingerprint %s)" % str(out.get("fingerprint") if isinstance(out, dict) else "?")[:64])


DIVERGED_DIFF_MAX = 256 * 1024      # characters of the live diff in a `diverged:` answer


def s_versus(expect_ids, before, after, live_diff):
    """Where live differs from the sandbox: for every data block either changed (expect_ids: the
    sandbox's after-state of what it added or changed; anything else it left as before), the
    properties whose digests differ. [{"id", "props"} | {"id", "only": "live" | "sandbox"}]."""
    ids = set(expect_ids or {}) | set(live_diff["added"]) | {c["id"] for c in live_diff["changed"]}
    ids |= set(live_diff["removed"])
    out = []
    for k in sorted(ids):
        sb = (expect_ids or {}).get(k) if k in (expect_ids or {}) else before["ids"].get(k)
        lv = after["ids"].get(k)
        if not isinstance(sb, dict) or lv is None:
            if (sb is None) != (lv is None):
                out.append({"id": k, "only": "live" if lv is not None else "sandbox"})
            continue
        if sb.get("digest") == lv.get("digest"):
            continue
        sp, lp = sb.get("props") or {}, lv.get("props") or {}
        out.append({"id": k, "props": sorted(p for p in set(sp) | set(lp) if sp.get(p) != lp.get(p))[:64]})
    return out[:256]


def cmd_run_script(args):
    """Issue 23: live does only what was reviewed. The live before-fingerprint must be the
    sandbox's (expect_before), the script runs in a transaction, what it added is checked
    (script_exec.check_after: file-writing nodes, simulations, data too big for the link:
    refused at the change), and the live after-fingerprint must be the sandbox's
    (expect_after) BEFORE the commit; otherwise the transaction is rolled back (exactly) and
    the answer starts with `diverged:` and carries the live diff."""
    import bpy
    script, plan_id, sha = args.get("script"), args.get("plan_id"), args.get("sha256")
    if not isinstance(script, str) or not script or len(script) > SCRIPT_MAX:
        raise CommandError("script must be a non-empty string of at most %d bytes" % SCRIPT_MAX)
    if not isinstance(sha, str) or not SHA256_HEX.fullmatch(sha):
        raise CommandError("refused: sha256 (hex) of the checked script is required")
    modules = s_names(args.get("modules"), script_exec.MODULES, "modules")
    allowed = s_names(args.get("builtins"), script_exec.BUILTINS, "builtins")
    timeout_ms = s_timeout_ms(args)
    expect_before, expect_after = args.get("expect_before"), args.get("expect_after")
    try:
        code, glob = script_exec.prepare(script, sha256=sha, modules=modules, builtins=allowed)
    except script_exec.ScriptRefused as e:       # nothing ran, no transaction was opened
        raise CommandError("refused: %s" % e)
    script_exec.settle()
    fp_before = fingerprint.compute()
    if expect_before is not None and fp_before["digest"] != expect_before:
        raise CommandError("refused: the live scene changed since the sandbox run (live fingerprint %s, the "
                           "sandbox started from %s); sandbox the script again" % (fp_before["digest"], expect_before))
    if plan_id in CANCELS:          # cancelled on its way here (issue 29)
        CANCELS.discard(plan_id)
        raise CommandError("cancelled: the script was cancelled before it started; nothing ran")
    hazards = script_exec.hazards()
    shapes = script_exec.topology()
    cmd_plan_begin({"plan_id": plan_id})
    for o in list(bpy.data.objects)[:TOUCH_MAX]:
        TXN.current.touch(o)
    before = set(bpy.data.objects.keys())
    # Issue 29: a cancel_plan naming plan_id stops the script (the watchdog raises
    # ScriptCancelled, as it raises ScriptTimeout at the limit), then it is rolled back.
    SCRIPT_RUNNING[0] = plan_id
    try:
        res = script_exec.run(code, glob, timeout_ms, cancelled=link_server.cancel_poll(plan_id, lambda: plan_id in CANCELS))
    finally:
        SCRIPT_RUNNING[0] = None
        CANCELS.discard(plan_id)
    if res["cancelled"]:
        note = s_undone(plan_id)
        if res["timed_out"]:
            raise CommandError("cancelled: the script ignored the interrupt and was stopped at its time limit of %d ms; %s"
                               % (timeout_ms, note))
        raise CommandError("cancelled: the script was stopped %.1f s after it started; %s"
                           % ((res["cancel_ms"] or 0.0) / 1000.0, note))
    if res["timed_out"]:
        note = s_rollback(plan_id)
        raise CommandError("timeout: the script ran longer than %d ms and was stopped; rolled back (%s)"
                           % (timeout_ms, note))
    if res["failure"] is not None:
        tb, _ = script_exec.format_error(res["failure"], script)
        note = s_rollback(plan_id)
        raise CommandError("the script failed live and was rolled back (%s):\n%s" % (note, tb))
    script_exec.canonical_after(shapes)             # as the sandbox did
    added = script_exec.check_after(hazards)
    if added:
        note = s_rollback(plan_id)
        raise CommandError("refused at the change: %s; rolled back (%s)" % ("; ".join(added)[:4000], note))
    script_exec.settle()
    fp_after = fingerprint.compute()
    diff = fingerprint.diff(fp_before, fp_after)
    if expect_after is not None and fp_after["digest"] != expect_after:
        versus = json.dumps(s_versus(args.get("expect_ids"), fp_before, fp_after, diff), sort_keys=True)
        note = s_rollback(plan_id)
        text = json.dumps(diff, sort_keys=True)
        raise CommandError("diverged: the live result differs from the sandbox's (live after-fingerprint %s, "
                           "sandbox %s); rolled back (%s); sandbox vs live: %s; live diff: %s"
                           % (fp_after["digest"], expect_after, note, versus[:DIVERGED_DIFF_MAX],
                              text[:DIVERGED_DIFF_MAX]))
    cmd_plan_commit({"plan_id": plan_id})
    created = sorted(n for n in bpy.data.objects.keys() if n not in before)
    return {"plan_id": plan_id, "objects_created": created[:500], "duration_ms": res["duration_ms"],
            "output": res["output"][-4000:], "timed_out": False, "fingerprint_before": fp_before["digest"],
            "fingerprint_after": fp_after["digest"], "diff": diff}, None


COMMANDS = {
    "ping": cmd_ping, "run_step": cmd_run_step_committed, "fingerprint": cmd_fingerprint, "scene_info": cmd_scene_info, "scene_names": cmd_scene_names,
    "object_info": cmd_object_info, "reset_scene": cmd_reset_scene,
    "render_preview": cmd_render_preview, "save_blend": cmd_save_blend,
    "viewport_screenshot": cmd_viewport_screenshot, "look": cmd_look,
    "shutdown": cmd_shutdown,
    "bench_direct": cmd_bench_direct,
    "plan_begin": cmd_plan_begin, "plan_commit": cmd_plan_commit, "plan_rollback": cmd_plan_rollback,
    "interrupted_ack": cmd_interrupted_ack,
    "rna_info": cmd_rna_info,
    "run_script": cmd_run_script,
    "run_plan": cmd_run_plan, "cancel_plan": cmd_cancel_plan,
    "asset_stage": cmd_asset_stage,
}

# Commands that change nothing in the scene (a GUI Blender may answer them from its snapshot).
READ_ONLY = link_proto.READ_ONLY
# Commands that end a transaction or settle its report: never skipped for a passed deadline, or
# a plan would stay open behind its executor's back (issue 17).
NO_DEADLINE = link_proto.NO_DEADLINE
# Commands after which the scene's object names are as before (with READ_ONLY): the others move
# the scene's revision, which every reply carries.
KEEPS_NAMES = link_proto.KEEPS_NAMES | link_proto.READ_ONLY
# Commands that leave the scene as it is, or take care of the snapshot themselves (they open,
# commit or roll back a transaction): the others move durable.generation before they run, so
# the next plan_begin saves a fresh snapshot (issue 23).
SNAPSHOT_SAFE = READ_ONLY | frozenset((
    "ping", "fingerprint", "cancel_plan", "interrupted_ack", "asset_stage", "rna_info", "shutdown",
    "plan_begin", "plan_commit", "plan_rollback", "run_plan", "run_script"))


def check_table(table, declared=None):
    """Raise ImportError unless `table` implements exactly the declared commands."""
    declared = link_proto.COMMANDS if declared is None else declared
    undeclared, missing = sorted(set(table) - set(declared)), sorted(set(declared) - set(table))
    if undeclared or missing:
        raise ImportError("blendmq: the add-on's commands differ from proto/blender_link.json:%s%s"
                          % (" implemented but not declared: %s;" % ", ".join(undeclared) if undeclared else "",
                             " declared but not implemented: %s" % ", ".join(missing) if missing else ""))


check_table(COMMANDS)


def s_refused(req, arrival, table):
    """(reply, None) refusing a request before it runs (bad id, deadline passed, unknown
    command), else (None, fn)."""
    rid = req.get("id")
    if not isinstance(rid, int) or isinstance(rid, bool):
        return {"id": 0, "ok": False, "error": "request id must be an integer", "bpy_ms": 0.0}, None
    cmd = req.get("cmd")
    deadline = req.get("deadline_ms")
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > 0 \
            and not (isinstance(cmd, str) and cmd in NO_DEADLINE) and time.monotonic() > arrival + deadline / 1000.0:
        return {"id": rid, "ok": False, "error": "deadline exceeded before start", "bpy_ms": 0.0}, None
    fn = table.get(cmd) if isinstance(cmd, str) else None
    if fn is None:
        return {"id": rid, "ok": False, "error": "unknown command %s" % str(cmd)[:80], "bpy_ms": 0.0}, None
    return None, fn


def s_checked_args(req):
    """The request's args, checked against their declaration (CommandError if they do not fit)."""
    cmd, args = req.get("cmd"), req.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise CommandError("args must be an object")
    declared = link_proto.COMMANDS.get(cmd)
    if declared is not None:        # a test's own table may hold commands of its own
        wrong = link_proto.check_args(declared["args"], args, cmd)
        if wrong:
            raise CommandError(wrong)
    return args


def handle_request(req, arrival, table=None, link=None, blob=b""):
    """Run one request (on the main thread, unless `table` holds functions that need no bpy).
    `link` is the serial of the connection it came on: a plan_begin makes that connection the
    plan's owner (transaction.link_lost). `blob` is the request's blob: a command whose
    function is marked takes_blob (asset_stage) is called fn(args, blob), the others fn(args)
    and a blob sent to them is ignored. Returns (reply, blob)."""
    refused, fn = s_refused(req, arrival, table if table is not None else COMMANDS)
    if refused is not None:
        return refused, b""
    rid = req["id"]
    t0 = time.perf_counter()
    TXN.link = link
    if req.get("cmd") not in SNAPSHOT_SAFE:
        durable.changed()
    try:
        args = s_checked_args(req)
        result, blob = fn(args, blob or b"") if getattr(fn, "takes_blob", False) else fn(args)
        reply = {"id": rid, "ok": True, "result": result}
    except CommandError as e:
        reply, blob = {"id": rid, "ok": False, "error": str(e)}, b""
    except Exception as e:          # never let a command take the server down
        reply, blob = {"id": rid, "ok": False, "error": "%s: %s" % (type(e).__name__, e)}, b""
    finally:
        TXN.link = None
        if req.get("cmd") not in KEEPS_NAMES:
            REVISION.bump()
    reply["bpy_ms"] = (time.perf_counter() - t0) * 1000.0
    reply["rev"] = REVISION.value
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


# ---------------------------------------------------------------------------- run_plan, streamed
# The runtimes run run_plan themselves (plan_run.py): progress frames go out as steps end, and
# a cancel_plan is read between steps. start_plan refuses what handle_request would refuse.

def start_plan(conn, req, arrival, cancelled=None):
    """A PlanRun for a run_plan request on `conn`, or None (the refusal was sent)."""
    refused, _fn = s_refused(req, arrival, COMMANDS)
    if refused is not None:
        conn.send(refused)
        return None
    rid = req["id"]
    TXN.link = conn.serial          # plan_begin: this connection owns the plan
    try:
        args = s_checked_args(req)
        plan_id = args["plan_id"]
        run = PlanRun(args, emit=lambda progress: conn.send({"id": rid, "progress": progress}),
                      cancelled=cancelled or (lambda: plan_id in CANCELS),
                      lost=lambda: conn.closed or conn.dead)
    except CommandError as e:
        conn.send({"id": rid, "ok": False, "error": str(e), "bpy_ms": 0.0})
        return None
    finally:
        TXN.link = None
    run.rid = rid
    return run


def finish_plan(conn, run):
    """Send run_plan's reply (nothing when the link dropped: link_lost reports instead)."""
    REVISION.bump()
    if run.result.get("status") != "abandoned":
        conn.send({"id": run.rid, "ok": True, "result": run.result, "bpy_ms": run.result["bpy_ms"],
                   "rev": REVISION.value})


def answer_cancel(conn, req, running):
    """cancel_plan while run_plan may be running: note it and answer at once."""
    args = req.get("args") if isinstance(req.get("args"), dict) else {}
    rid = req.get("id") if isinstance(req.get("id"), int) and not isinstance(req.get("id"), bool) else 0
    wrong = link_proto.check_args(link_proto.COMMANDS["cancel_plan"]["args"], args, "cancel_plan")
    if wrong:
        conn.send({"id": rid, "ok": False, "error": wrong, "bpy_ms": 0.0})
        return
    cancel(args["plan_id"])
    busy = running(args["plan_id"]) or args["plan_id"] == SCRIPT_RUNNING[0]
    conn.send({"id": rid, "ok": True, "result": {"plan_id": args["plan_id"], "running": busy},
               "bpy_ms": 0.0})
