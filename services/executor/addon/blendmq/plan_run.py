"""plan_run — run_plan: a sealed plan's steps sent once (or in chunks) and run back to back
(issue 14).

The executor used to send each step and wait for its answer, so every step paid a round trip,
and in a GUI Blender a main-loop tick and a redraw. A PlanRun runs the steps itself:

- offset 0 opens the plan's transaction (plan_begin folded in); the last chunk (final) commits
  it. A failed step or a cancel ends the plan at once: rolled back in-process, or committed
  when the plan asked to keep partial work.
- After each step `emit(progress)` sends a small progress frame; nobody answers it.
- Between steps `cancelled()` is asked, without blocking (the runtime reads cancel_plan frames).
- A step that names an object ("name") makes later steps' target and parent mean that object,
  whatever Blender called it ("box.001"); the map lives on the transaction, so it spans chunks.
- `advance(budget_end)` runs steps until the plan or the chunk ends, or perf_counter() passes
  budget_end: the GUI calls it once per timer tick, so many steps share one redraw.

The add-on's own time (argument checks, bookkeeping, frames) is reported apart from bpy's."""
import time

from .args import CommandError
from .capture import CAPTURE
from .steps import cmd_run_step
from .transaction import TXN, cmd_plan_begin, cmd_plan_commit, cmd_plan_rollback

ERROR_MAX = 1000
CANCELS_MAX = 1000
CANCELS = set()     # plan ids a cancel_plan named (the GUI's I/O thread adds; the plan's end removes)


def cancel(plan_id):
    """Note a cancel_plan (any thread). A plan not running yet is cancelled when it starts."""
    if len(CANCELS) >= CANCELS_MAX:
        CANCELS.clear()     # cancels for plans that never came: forget them, stay bounded
    CANCELS.add(plan_id)


class PlanRun:
    def __init__(self, args, emit=None, cancelled=None, lost=None):
        self.plan_id = args["plan_id"]
        self.steps = args["steps"]
        self.offset = int(args.get("offset") or 0)
        self.total = int(args.get("total") or self.offset + len(self.steps))
        self.final = args.get("final", True) is not False
        self.keep_partial = bool(args.get("keep_partial"))
        self.emit, self.lost = emit, lost
        self.cancelled = cancelled if cancelled is not None else (lambda: self.plan_id in CANCELS)
        self.k = 0                  # index in this chunk of the next step
        self.done_ok = 0            # steps of this chunk that succeeded
        self.bpy_s = 0.0            # time inside the steps (bpy and the builtins)
        self.t0 = time.perf_counter()
        self.result = None          # the reply's result, once the chunk ended
        if self.offset == 0:
            cmd_plan_begin({"plan_id": self.plan_id, "cid": args.get("cid"), "steps": self.total})
        elif TXN.current is None or TXN.current.plan_id != self.plan_id:
            raise CommandError("run_plan: plan %s is not open (a chunk at offset %d needs the chunks before it)"
                               % (self.plan_id, self.offset))
        self.txn = TXN.current

    # ---- running

    def advance(self, budget_end=None):
        """Run steps until the chunk ends or the budget is spent. True when the chunk ended."""
        with CAPTURE.batch():       # fd 1 is redirected once per batch, not per operator
            while self.result is None:
                if (self.lost is not None and self.lost()) or TXN.current is not self.txn:
                    self.abandon()      # the link dropped: link_lost rolls back (or already did)
                    break
                if self.cancelled is not None and self.cancelled():
                    self._end("cancelled", "cancelled after step %d of %d" % (self.offset + self.k, self.total))
                    break
                if self.k >= len(self.steps):
                    self._end("done" if self.final else "continue")
                    break
                self._step()
                if budget_end is not None and time.perf_counter() >= budget_end:
                    break
        return self.result is not None

    def _step(self):
        step = self.steps[self.k]
        self.k += 1
        number = self.offset + self.k
        names = self.txn.names
        if names and isinstance(step, dict):
            step = s_resolve(step, names)
        t = time.perf_counter()
        error = None
        try:
            result, _ = cmd_run_step({"step": step, "plan_id": self.plan_id})
        except CommandError as e:
            error = str(e)
        except Exception as e:      # a step must never take the plan (or the server) down
            error = "%s: %s" % (type(e).__name__, e)
        bpy_ms = (time.perf_counter() - t) * 1000.0
        self.bpy_s += bpy_ms / 1000.0
        if error is None:
            self.done_ok += 1
            obj = result.get("object")
            asked = step.get("name")
            if isinstance(asked, str) and isinstance(obj, str):
                names[asked] = obj
            progress = {"step": number, "status": "ok", "objects_created": result.get("objects_created", []),
                        "object": obj, "bpy_ms": bpy_ms}
        else:
            progress = {"step": number, "status": "failed", "error": error[:ERROR_MAX], "bpy_ms": bpy_ms}
        if self.emit is not None:
            self.emit(progress)
        if error is not None:
            self._end("failed", "step %d: %s" % (number, error[:ERROR_MAX]), failed_step=number)

    def _end(self, status, error=None, failed_step=0):
        CANCELS.discard(self.plan_id)
        rollback = None
        fingerprint = None
        if status in ("failed", "cancelled") and not self.keep_partial:
            try:
                rollback, _ = cmd_plan_rollback({"plan_id": self.plan_id})
                fingerprint = rollback.get("fingerprint")
            except CommandError as e:
                rollback = {"error": str(e)}
            except Exception as e:      # a rollback that raises is reported, never fatal
                rollback = {"error": "rollback failed: %s: %s" % (type(e).__name__, str(e)[:ERROR_MAX])}
        elif status != "continue":
            try:
                fingerprint = cmd_plan_commit({"plan_id": self.plan_id})[0]["fingerprint"]
            except Exception as e:      # not saved: rolled back by plan_commit
                status, error = "failed", str(e)[:ERROR_MAX]
                rollback = {"error": error}
        total_ms = (time.perf_counter() - self.t0) * 1000.0
        self.result = {"plan_id": self.plan_id, "status": status, "steps_done": self.offset + self.done_ok,
                       "failed_step": failed_step, "error": error, "rollback": rollback,
                       "fingerprint": fingerprint,
                       "bpy_ms": self.bpy_s * 1000.0, "addon_ms": max(0.0, total_ms - self.bpy_s * 1000.0)}

    def abandon(self):
        """The connection is gone: stop here and leave the transaction open; the runtime's
        link_lost rolls it back and keeps the report for the next executor."""
        CANCELS.discard(self.plan_id)
        if self.result is None:
            self.result = {"plan_id": self.plan_id, "status": "abandoned"}


def s_resolve(step, names):
    """The step with target and params.parent (object.modifier: params.object) naming what earlier
    steps really created."""
    target = step.get("target")
    params = step.get("params")
    key = "object" if step.get("operation") == "object.modifier" else "parent"    # a boolean's operand (issue 27)
    parent = params.get(key) if isinstance(params, dict) else None
    new_target = names.get(target) if isinstance(target, str) else None
    new_parent = names.get(parent) if isinstance(parent, str) else None
    if new_target is None and new_parent is None:
        return step
    step = dict(step)
    if new_target is not None:
        step["target"] = new_target
    if new_parent is not None:
        step["params"] = dict(params, **{key: new_parent})
    return step


def cmd_run_plan(args):
    """run_plan without a runtime (a direct call, tests): the chunk runs to its end, no
    progress frames, no cancel."""
    run = PlanRun(args)
    run.advance()
    return run.result, None


def cmd_cancel_plan(args):
    """cancel_plan outside a running plan (the runtimes answer it themselves while one runs)."""
    return {"plan_id": args["plan_id"], "running": False}, None
