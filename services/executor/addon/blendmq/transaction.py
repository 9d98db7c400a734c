"""transaction — atomic plans (plan_begin, plan_commit, plan_rollback) and, in a GUI Blender,
one undo step per plan.

Exact rollback (issue 23): plan_begin makes sure a snapshot of the whole state exists
(durable.ensure_snapshot: headless, usually the last commit's file) and notes its fingerprint;
a rollback loads it back and checks the fingerprint: {removed, restored, fingerprint, exact}.
plan_commit saves the state (durably with --state-dir) before it answers, with its fingerprint.
A rollback that raises is caught by its callers (run_plan, link_lost); the server goes on.

Undo in the GUI: Blender pushes no undo step for operators called from Python, but a plan's
steps run over many passes of Blender's main loop and the user may act (and push undo steps)
in between. So plan_begin pushes a step that holds the scene as it is ("blendmq: before plan
X") and turns global undo off while the plan runs; plan_commit turns it back on and pushes one
step holding the whole plan ("blendmq plan X"): one Ctrl+Z goes back to before the plan, and
Ctrl+Shift+Z brings it back. A rollback restores the scene itself and pushes nothing. The
user's undo preference is put back as it was, without marking the preferences changed.

No half-built scenes (issue 17): the connection that sent plan_begin owns the transaction. When
it drops (EOF, reset, protocol error, a failed send, the add-on stopping) while the plan is open,
link_lost() rolls the plan back at once, on the thread that runs commands, and remembers a
report {id, plan_id, cid, steps_run, steps_total, rollback: {removed, restored, *_count}, at,
reason}. A plan_begin that finds another plan still open rolls that one back the same way. The
hello reply carries the reports not yet acknowledged (`interrupted`) and, if a rollback raised
and left a plan open, `open_plan`; the executor records them and sends interrupted_ack {ids}.
Reports live in memory only (a Blender that dies loses its scene with them), at most
REPORTS_MAX, the oldest dropped first.
"""
import re
import secrets
import time

import bpy

from . import compat, durable, fingerprint
from .args import CommandError
from .log import log
from .scene import s_ensure_object_mode

REPORTS_MAX = 8         # unacknowledged reports kept (the hello reply stays far below 1 MiB)
NAMES_MAX = 256         # object names per list in a report (the counts are always exact)
REASON_MAX = 200
CID_RE = re.compile(r"[\x21-\x7e]{1,64}")     # the bus's own rule for ids: printable ASCII, no space
REPORT_ID_RE = re.compile(r"[0-9a-f]{16}")
STEPS_MAX = 1 << 20     # a plan's declared step count, as plan_begin may carry it
# bpy.data collections whose new blocks a rollback removes (s_Transaction.remove_new_data):
# object data and materials only once unused (an object the plan did not touch may hold them),
# the others whatever refers to them (only the plan's own work can).
DATA_WHEN_UNUSED = ("meshes", "curves", "armatures", "cameras", "lights", "materials")
DATA_ALWAYS = ("collections", "actions", "node_groups", "worlds", "images", "textures")


def s_window_override():
    """A context override naming the first window, for a timer whose context lost its window
    (a file load or an undo inside the same tick clears it); {} when the context has one."""
    if bpy.context.window is not None and bpy.context.screen is not None:
        return None
    wm = bpy.context.window_manager
    if wm is None or not len(wm.windows) or not hasattr(bpy.context, "temp_override"):
        return None
    win = wm.windows[0]
    return bpy.context.temp_override(window=win, screen=win.screen)


def s_undo_push(message):
    try:
        override = s_window_override()
        if override is None:
            bpy.ops.ed.undo_push(message=message)
        else:
            with override:
                bpy.ops.ed.undo_push(message=message)
    except RuntimeError as e:
        log("undo push failed: %s" % e)


class s_UndoBracket:
    """GUI only: global undo off between plan_begin and the plan's end."""

    def __init__(self, plan_id, cid=None, steps_total=0, link=None):
        self.plan_id, self.cid, self.steps_total = plan_id, cid, steps_total
        self.link = link        # serial of the connection that opened it (None: a direct call)
        self.steps_run = 0      # run_step calls that succeeded inside the plan
        prefs = bpy.context.preferences
        s_undo_push("blendmq: before plan %s" % plan_id)
        self.global_undo = prefs.edit.use_global_undo
        dirty = prefs.is_dirty
        prefs.edit.use_global_undo = False
        prefs.is_dirty = dirty              # our switch is not the user's change
        self.open = True

    def close(self, push_label=None):
        """Global undo back as it was; push one step named push_label if given."""
        if not self.open:
            return
        self.open = False
        prefs = bpy.context.preferences
        dirty = prefs.is_dirty
        prefs.edit.use_global_undo = self.global_undo
        prefs.is_dirty = dirty
        if push_label:
            s_undo_push(push_label)


def s_internal(block):
    """Blender's own images (a render's result, the compositor's viewer): not a plan's work."""
    return getattr(block, "type", None) in ("RENDER_RESULT", "COMPOSITING") and isinstance(block, bpy.types.Image)


class s_Transaction:
    """What a plan changed, so a failed plan can put the scene back as it was.

    At plan_begin the names of existing objects and of the data a plan may add (DATA: an
    asset import adds images, materials, worlds, node groups, meshes, collections, actions,
    armatures...) are noted, and the scene's world. Before a step acts on an object that
    existed before the plan, its transform, selection, material slots and a copy of its mesh
    (smooth flags and mesh-linked materials live there) are saved, once. Rollback deletes what
    the plan created, restores what it touched and puts the scene's world back."""

    def __init__(self, plan_id, cid=None, steps_total=0, link=None):
        self.plan_id, self.cid, self.steps_total = plan_id, cid, steps_total
        self.link = link        # serial of the connection that opened it (None: a direct call)
        self.steps_run = 0      # run_step calls that succeeded inside the plan
        self.objects = set(bpy.data.objects.keys())
        self.data = {kind: set(getattr(bpy.data, kind).keys()) for kind in DATA_WHEN_UNUSED + DATA_ALWAYS}
        world = bpy.context.scene.world
        self.world = world.name if world is not None else None
        vl = bpy.context.view_layer
        self.active = vl.objects.active.name if vl.objects.active else None
        self.selected = [o.name for o in compat.selected_objects(vl)]
        self.saved = {}
        self.undo = None        # the s_UndoBracket in a GUI Blender
        self.known = None       # object names after the last step (steps.py diffs against them)
        self.names = {}         # run_plan: a step's "name" -> the object's actual name

    def touch(self, obj):
        if obj is None or obj.name not in self.objects or obj.name in self.saved:
            return
        mesh = obj.data.copy() if obj.type == "MESH" and obj.data is not None else None
        self.saved[obj.name] = {
            "location": obj.location.copy(), "rotation": obj.rotation_euler.copy(),
            "scale": obj.scale.copy(), "mesh": mesh,
            "slots": [(slot.link, slot.material) for slot in obj.material_slots],
            "modifiers": [m.name for m in obj.modifiers],
            "parent": obj.parent, "parent_inverse": obj.matrix_parent_inverse.copy(),
        }

    def touch_for_step(self, target):
        vl = bpy.context.view_layer
        if target is not None:
            self.touch(vl.objects.get(target))
            return
        self.touch(vl.objects.active)
        for o in compat.selected_objects(vl):
            self.touch(o)

    def rollback(self):
        s_ensure_object_mode()
        removed = [o.name for o in bpy.data.objects if o.name not in self.objects]
        for name in removed:
            bpy.data.objects.remove(bpy.data.objects[name], do_unlink=True)
        restored = []
        for name, st in self.saved.items():
            obj = bpy.data.objects.get(name)
            if obj is None:
                continue
            for mod in [m for m in obj.modifiers if m.name not in st["modifiers"]]:
                obj.modifiers.remove(mod)           # what object.modifier added
            obj.parent, obj.matrix_parent_inverse = st["parent"], st["parent_inverse"]
            obj.location, obj.rotation_euler, obj.scale = st["location"], st["rotation"], st["scale"]
            if st["mesh"] is not None:
                changed, saved = obj.data, st["mesh"]
                obj.data = saved
                st["mesh"] = None
                if changed.users == 0:
                    mesh_name = changed.name
                    bpy.data.meshes.remove(changed)
                    saved.name = mesh_name  # the copy takes the mesh's own name back
            for slot, (link, mat) in zip(obj.material_slots, st["slots"]):
                if link == "OBJECT":
                    slot.link, slot.material = link, mat
            restored.append(name)
        self.discard()              # the saved copies nobody took back go before the new data is swept
        self.restore_world()
        self.remove_new_data()
        vl = bpy.context.view_layer
        compat.deselect_all(vl)
        for name in self.selected:
            if name in vl.objects:
                vl.objects[name].select_set(True)
        vl.objects.active = vl.objects.get(self.active) if self.active else None
        self.discard()
        return {"removed": sorted(removed), "restored": sorted(restored)}

    def restore_world(self):
        scene = bpy.context.scene
        world = bpy.data.worlds.get(self.world) if self.world is not None else None
        if scene.world != world:
            scene.world = world

    def remove_new_data(self):
        """Remove the data blocks the plan added: DATA_ALWAYS whatever still refers to them,
        DATA_WHEN_UNUSED once nothing but a fake user holds them. Freeing one block frees its
        users' hold on others (a mesh on its materials, a material on its images): go round
        until nothing more goes."""
        for _ in range(4):
            removed = 0
            for kind in DATA_WHEN_UNUSED + DATA_ALWAYS:
                coll, before = getattr(bpy.data, kind), self.data[kind]
                always = kind in DATA_ALWAYS
                for block in [b for b in coll if b.name not in before and not s_internal(b)
                              and (always or b.users - (1 if b.use_fake_user else 0) <= 0)]:
                    coll.remove(block)
                    removed += 1
            if not removed:
                break

    def discard(self):
        for st in self.saved.values():
            if st["mesh"] is not None and st["mesh"].users == 0:
                bpy.data.meshes.remove(st["mesh"])
                st["mesh"] = None


class s_Plan:
    """An open plan: the snapshot to go back to, and what the plan touched (for the report).

    Holds no bpy references: a rollback replaces the whole main database."""

    def __init__(self, plan_id, cid=None, steps_total=0, link=None):
        self.plan_id, self.cid, self.steps_total = plan_id, cid, steps_total
        self.link = link        # serial of the connection that opened it (None: a direct call)
        self.steps_run = 0      # run_step calls that succeeded inside the plan
        self.snap_path, self.before = durable.ensure_snapshot()
        self.objects = set(bpy.data.objects.keys())
        self.touched = set()    # objects from before the plan a step acted on
        self.undo = None        # the s_UndoBracket in a GUI Blender
        self.known = None       # object names after the last step (steps.py diffs against them)
        self.names = {}         # run_plan: a step's "name" -> the object's actual name

    def touch(self, obj):
        if obj is not None and obj.name in self.objects:
            self.touched.add(obj.name)

    def touch_all(self):
        self.touched.update(self.objects)

    def touch_for_step(self, target):
        vl = bpy.context.view_layer
        if target is not None:
            self.touch(vl.objects.get(target))
            return
        self.touch(vl.objects.active)
        for o in compat.selected_objects(vl):
            self.touch(o)

    def rollback(self):
        """Back to the snapshot. {removed, restored, fingerprint, exact, ms}: removed the
        objects the plan made, restored those from before it touched or deleted."""
        s_ensure_object_mode()      # an edit step left edit mode on: its own undo stack is not the plan's (issue 27)
        now = set(bpy.data.objects.keys())
        removed = sorted(now - self.objects)
        restored = sorted((self.objects - now) | (self.touched & self.objects))
        self.known = None
        out = self.undo_back()
        if out is None or not out["exact"]:
            out = durable.restore(self.snap_path, self.before)
        out.update(removed=removed, restored=restored, before=self.before)
        return out

    def undo_back(self):
        """GUI: back to the bracket's "before plan" undo step. Loading a file from a timer
        leaves a GUI Blender's window context broken (later operators fail their poll, and
        3.4 crashed on the next UI change), so the GUI goes back with its own memfile undo,
        which keeps data with no users as a save does: the plan's partial state is pushed as
        one step and undone, so it stays reachable by redo. Checked against the fingerprint
        before the plan; None (or inexact) falls back to the snapshot file."""
        bracket = self.undo
        if bracket is None or bpy.app.background:
            return None
        t0 = time.perf_counter()
        bracket.close("blendmq plan %s (rolled back)" % self.plan_id)
        try:
            override = s_window_override()
            if override is None:
                bpy.ops.ed.undo()
            else:
                with override:
                    bpy.ops.ed.undo()
        except RuntimeError as e:
            log("rollback by undo failed (%s): loading the snapshot" % e)
            return None
        durable.changed()
        digest = fingerprint.compute(props=False)["digest"]
        exact = digest == self.before
        if not exact:
            log("rollback by undo left fingerprint %s, not %s: loading the snapshot" % (digest[:16], str(self.before)[:16]))
        return {"fingerprint": digest, "exact": exact, "ms": (time.perf_counter() - t0) * 1000.0, "by": "undo"}

    def discard(self):
        pass


class TXN:
    current = None
    link = None         # serial of the connection whose request is running (handle_request sets it)
    reports = []        # rollbacks on link loss not yet acknowledged by an executor, oldest first


def s_plan_id(args):
    plan_id = args.get("plan_id")
    if not isinstance(plan_id, str) or not plan_id or len(plan_id) > 64:
        raise CommandError("plan_id must be a string of 1..64 characters")
    return plan_id


def s_cid(args):
    cid = args.get("cid")
    if cid is not None and not (isinstance(cid, str) and CID_RE.fullmatch(cid)):
        raise CommandError("cid must be 1..64 printable ASCII characters without spaces")
    return cid


def s_steps_total(args):
    steps = args.get("steps", 0)
    if steps is None:
        return 0
    if not isinstance(steps, int) or isinstance(steps, bool) or not 0 <= steps <= STEPS_MAX:
        raise CommandError("steps must be an integer in 0..%d" % STEPS_MAX)
    return steps


def s_close_undo(txn, push_label=None):
    if txn is not None and txn.undo is not None:
        txn.undo.close(push_label)
        txn.undo = None


def cmd_plan_begin(args):
    plan_id, cid, steps_total = s_plan_id(args), s_cid(args), s_steps_total(args)
    if TXN.current is not None:      # a plan its owner lost track of: never leave it half-built
        s_interrupt(TXN.current, "superseded: plan_begin of plan %s found plan %s still open"
                    % (plan_id, TXN.current.plan_id), give_up=True)
    TXN.current = s_Plan(plan_id, cid, steps_total, TXN.link)
    if not bpy.app.background:
        TXN.current.undo = s_UndoBracket(plan_id)
    return {"plan_id": plan_id, "objects": len(TXN.current.objects), "fingerprint": TXN.current.before}, None


def cmd_plan_commit(args):
    """Commit: the state is saved (durably with --state-dir) before the reply, which carries
    its fingerprint. A save that fails rolls the plan back (nothing is acknowledged that is not
    on disk) and answers the error."""
    plan_id = s_plan_id(args)
    txn = TXN.current if TXN.current is not None and TXN.current.plan_id == plan_id else None
    try:
        digest = durable.commit("plan %s" % plan_id)
    except Exception as e:
        error = "%s: %s" % (type(e).__name__, e)
        log("commit of plan %s failed: %s" % (plan_id, error))
        if txn is None:
            raise CommandError("commit failed: %s" % error[:REASON_MAX])
        TXN.current = None
        try:
            rb = txn.rollback()
            note = "rolled back (exact: %s)" % rb["exact"]
        except Exception as e2:
            note = "and its rollback failed too: %s: %s" % (type(e2).__name__, e2)
        finally:
            s_close_undo(txn)
        raise CommandError(("commit failed, the plan was not saved: %s; " % error[:REASON_MAX]) + note[:REASON_MAX])
    if txn is not None:
        s_close_undo(txn)
        TXN.current = None
    if not bpy.app.background:       # one undo step for the whole plan in the GUI
        s_undo_push("blendmq plan %s" % plan_id)
    return {"plan_id": plan_id, "fingerprint": digest}, None


def cmd_plan_rollback(args):
    plan_id = s_plan_id(args)
    if TXN.current is None or TXN.current.plan_id != plan_id:
        raise CommandError("no open transaction for plan %s" % plan_id)
    txn, TXN.current = TXN.current, None
    try:
        return txn.rollback(), None
    finally:
        s_close_undo(txn)           # the scene is as before the plan: no undo step


def s_names_capped(names):
    return sorted(names)[:NAMES_MAX]


def s_remember(report):
    TXN.reports.append(report)
    while len(TXN.reports) > REPORTS_MAX:
        old = TXN.reports.pop(0)
        log("forgot the unacknowledged report of plan %s (more than %d waiting)" % (old["plan_id"], REPORTS_MAX))


def s_interrupt(txn, reason, give_up=False):
    """Roll back `txn` (the current transaction) because its owner is gone, and remember a
    report. If the rollback raises, the plan stays open (hello reports it as open_plan, and the
    next executor rolls it back), unless give_up: then it is closed as it is and the report
    says the rollback failed (a new plan must be able to start)."""
    reason = str(reason)[:REASON_MAX]
    report = {"id": secrets.token_hex(8), "plan_id": txn.plan_id, "cid": txn.cid, "steps_run": txn.steps_run,
              "steps_total": txn.steps_total, "at": int(time.time() * 1000), "reason": reason}
    try:
        rb = txn.rollback()
    except Exception as e:          # a bpy failure must not take the server down
        error = ("%s: %s" % (type(e).__name__, e))[:REASON_MAX]
        log("rollback of interrupted plan %s failed: %s" % (txn.plan_id, error))
        s_close_undo(txn, "blendmq plan %s (interrupted)" % txn.plan_id)
        if not give_up:
            txn.error, txn.reason = error, reason
            return None
        if TXN.current is txn:
            TXN.current = None
        try:
            txn.discard()
        except Exception:
            pass
        report.update(rollback=None, error="rollback failed, the plan's work was left in place: " + error)
        s_remember(report)
        return report
    if TXN.current is txn:
        TXN.current = None
    s_close_undo(txn)               # the scene is as before the plan: no undo step
    report["rollback"] = {"removed": s_names_capped(rb["removed"]), "restored": s_names_capped(rb["restored"]),
                          "removed_count": len(rb["removed"]), "restored_count": len(rb["restored"]),
                          "fingerprint": rb["fingerprint"], "exact": rb["exact"]}
    s_remember(report)
    log("plan %s interrupted (%s): rolled back, %d object(s) removed, %d restored"
        % (txn.plan_id, reason, len(rb["removed"]), len(rb["restored"])))
    return report


def link_lost(link, reason):
    """The connection with serial `link` went away: roll back the plan it opened, if one is
    open. Runs where commands run (the main thread). Returns the report, or None."""
    txn = TXN.current
    if txn is None or link is None or txn.link != link:
        return None
    return s_interrupt(txn, reason)


def hello_fields():
    """What the hello reply says about earlier connections: `interrupted` (the reports not yet
    acknowledged) and `open_plan` when a plan is still open (its rollback raised)."""
    out = {"interrupted": [dict(r) for r in TXN.reports]}
    txn = TXN.current
    if txn is not None:
        out["open_plan"] = {"plan_id": txn.plan_id, "cid": txn.cid, "steps_run": txn.steps_run,
                            "steps_total": txn.steps_total,
                            "reason": getattr(txn, "reason", "open when this connection was made"),
                            "error": getattr(txn, "error", None)}
    return out


def cmd_interrupted_ack(args):
    """interrupted_ack {ids: [report id, ...]}: the executor has recorded these reports."""
    ids = args.get("ids")
    if not (isinstance(ids, list) and len(ids) <= 4 * REPORTS_MAX
            and all(isinstance(i, str) and REPORT_ID_RE.fullmatch(i) for i in ids)):
        raise CommandError("ids must be a list of at most %d report ids (16 hex digits)" % (4 * REPORTS_MAX))
    wanted = set(ids)
    before = len(TXN.reports)
    TXN.reports[:] = [r for r in TXN.reports if r["id"] not in wanted]
    return {"acked": before - len(TXN.reports), "left": len(TXN.reports)}, None


def end_undo_bracket():
    """The add-on stops with a plan open (or its rollback on a lost link raised): undo works
    again, and what the plan did so far is one undo step. The transaction stays open."""
    txn = TXN.current
    if txn is not None and txn.undo is not None:
        s_close_undo(txn, "blendmq plan %s (interrupted)" % txn.plan_id)
