"""gui — the GUI runtime: an I/O thread (accept, read frames, authenticate, answer read-only
queries from the scene snapshot) and a bpy.app.timers function that runs everything else on
the main thread, in arrival order. bpy is never touched off the main thread.

A query is answered by the I/O thread only when nothing is queued or running for the main
thread and the snapshot is fresh, so replies keep their order and a query never misses a
change a command it follows made. A command that changes the scene rebuilds the snapshot
before its reply when that is cheap (EAGER_REBUILD_MAX_MS), and its reply and the count of
finished work go out together under `order` (as the I/O thread's check and answer do): a read
sent the instant a write answered is answered at once from the new snapshot, never behind a
redraw (issue 28). A change notice (depsgraph update, undo, load) that comes after also rebuilds
it at once when cheap (NOTICE_REBUILD_MAX_MS), and a query that finds it stale waits for that
(READ_WAIT_S) before it queues for the main thread. A lost client's open plan is rolled back on the main thread
(CLIENT_LOST), and a new client's hello reply is queued behind it (HELLO), so it reports that
rollback (issue 17)."""
import queue
import sys
import threading
import time

import bpy

from . import settings, tokens, transaction
from .background import write_port_file
from .commands import READ_ONLY, answer_cancel, finish_plan, handle_request, s_Flags, start_plan
from .log import log
from .scene import REVISION
from .server import Server
from .snapshot import SceneSnapshot

TICK_S = 0.01
TICK_BUDGET_S = 0.05        # keep the UI responsive under a burst (and a run_plan's steps per redraw)
REBUILD_MIN_GAP_S = 0.1     # idle snapshot rebuilds: at most this often, and at most ~10% of the time
EAGER_REBUILD_MAX_MS = 5.0  # a write's reply waits for a rebuild of the snapshot when the last took at most this (CPU ms)
NOTICE_REBUILD_MAX_MS = 2.0     # a change notice (depsgraph, undo) rebuilds it at once when the last took at most this (CPU ms)
READ_WAIT_S = 0.02          # a query finding the snapshot stale waits this long for that rebuild, then the main thread
CLIENT_LOST = object()      # queued by the I/O thread when an authenticated client goes away
HELLO = object()            # queued by the I/O thread: send a hello reply (after earlier rollbacks)

HANDLERS = ("depsgraph_update_post", "undo_post", "redo_post", "load_post")
# How long the I/O thread may wait for the GIL while the main thread runs Python (a change
# notice's rebuild, a step, a commit): Python's default is 5 ms, which a read answered from the
# snapshot then waits at worst (issue 28: read after write within 5 ms at p99). Set while the
# service runs, the interpreter's own value put back when it stops.
GIL_SWITCH_S = 0.0005


class GuiService:
    """One server in a GUI Blender; the panel reads `server` and `token`."""

    def __init__(self, host, port, token, port_file=None, allow_plain_remote=False):
        s_Flags.shutdown = False
        self.queue = queue.Queue()
        self.queued = 0         # written by the I/O thread only
        self.done = 0           # written by the main thread only, under `order`
        self.order = threading.Lock()   # a reply and the count of finished work, against the I/O thread's answers
        self.snapshot = SceneSnapshot()
        self.io_answers = 0
        self.next_rebuild = 0.0
        self.active = None      # (conn, PlanRun): a run_plan in progress (main thread)
        self.active_plan = None     # its plan id (read by the I/O thread for cancel_plan's answer)
        self.server = Server(host, port, token, self._on_request, self._on_drop, self._on_hello,
                             self._on_cancel, allow_plain_remote=allow_plain_remote)
        self.token = token
        self.redraw_seen = -1
        self.ticks = 0          # timer passes, and those that ran a request (main thread; benchmarks read them)
        self.busy_ticks = 0
        self.tick_fn = self._tick       # one object, so unregister finds it
        self.in_tick = False    # the timer is running (its own writes rebuild once, at the end)
        self.handler_fn = s_change_handler(self.snapshot, lambda: self.in_tick)
        for name in HANDLERS:
            getattr(bpy.app.handlers, name).append(self.handler_fn)
        self.switch_before = sys.getswitchinterval()
        sys.setswitchinterval(min(self.switch_before, GIL_SWITCH_S))
        self.thread = threading.Thread(target=self._io, name="blendmq-io", daemon=True)
        self.thread.start()
        bpy.app.timers.register(self.tick_fn, first_interval=TICK_S, persistent=True)
        if port_file:
            write_port_file(port_file, self.server.port)
        log("listening on %s" % self.server.where)

    # ---- I/O thread

    def _io(self):
        try:
            while not self.server.stopping:
                self.server.poll()
        except Exception as e:
            log("I/O thread failed: %s: %s" % (type(e).__name__, e))

    def _on_request(self, conn, req, blob, arrival):
        if s_read_only(req):
            if self.queued == self.done and self.snapshot.fresh() is None:
                self.snapshot.wait_fresh(READ_WAIT_S)   # a change notice is being rebuilt after
            with self.order:
                data = self.snapshot.fresh() if self.queued == self.done else None
                if data is not None:
                    frame = data.reply_frame(req, arrival)
                    if frame is not None:
                        conn.send_frame(frame)
                    else:       # malformed or unknown: handle_request words the error
                        conn.send(*handle_request(req, arrival, self.snapshot.table(data)))
                    self.io_answers += 1
                    return
        self.queued += 1
        self.queue.put((conn, req, arrival, blob))

    def _on_cancel(self, conn, req):
        # here, on the I/O thread: the plan it stops is running on the main thread
        answer_cancel(conn, req, lambda plan_id: plan_id == self.active_plan)

    def _on_drop(self, conn):
        self.queued += 1
        self.queue.put((conn, CLIENT_LOST, 0.0, b""))

    def _on_hello(self, conn, rid, result):
        # on the main thread, in order: a rollback of the previous client's plan comes first
        self.queued += 1
        self.queue.put((conn, HELLO, (rid, result), b""))

    # ---- main thread

    def _run(self, conn, req, arrival, blob=b""):
        """Run one queued item: (finished, reply to send with the count, or None). Not finished
        when it became the running plan."""
        if req is CLIENT_LOST:
            if transaction.link_lost(conn.serial, conn.drop_reason) is not None:
                self.snapshot.invalidate()
            return True, None
        if req is HELLO:
            conn.finish_hello(*arrival)
            return True, None
        if req.get("cmd") == "run_plan":
            run = start_plan(conn, req, arrival)
            if run is None:
                return True, None
            self.active, self.active_plan = (conn, run), run.plan_id
            return False, None
        if s_read_only(req):
            data = self.snapshot.fresh() or self.snapshot.rebuild()
            reply, rblob = handle_request(req, arrival, self.snapshot.table(data))
            conn.send(reply, rblob)
            return True, None
        reply, rblob = handle_request(req, arrival, link=conn.serial, blob=blob)
        self._after_write()                 # before the reply: the next query must not read old data
        return True, lambda: conn.send(reply, rblob)

    def _after_write(self):
        """The scene changed: the snapshot is stale; rebuilt now when that is cheap, so the
        query that follows a write is answered by the I/O thread at once."""
        self.snapshot.invalidate()
        if self.snapshot.build_cpu_ms <= EAGER_REBUILD_MAX_MS:
            try:
                self.snapshot.rebuild()
            except Exception as e:          # stale is safe: the next query rebuilds on this thread
                log("snapshot rebuild failed: %s: %s" % (type(e).__name__, e))
                self.snapshot.invalidate()

    def _finish(self, send=None):
        """One queued item is done: its reply (if any) and the count, together."""
        with self.order:
            try:
                if send is not None:
                    send()
            finally:
                self.done += 1

    def _advance_plan(self, budget_end):
        """Run the plan's steps until the tick's budget is spent. True when it ended."""
        conn, run = self.active
        try:
            ended = run.advance(budget_end)
        except Exception as e:      # the timer must survive anything
            log("run_plan failed: %s: %s" % (type(e).__name__, e))
            run.abandon()
            ended = True
        if not ended:
            self.snapshot.invalidate()
            return False
        self._after_write()
        self.active = self.active_plan = None
        try:
            self._finish(lambda: finish_plan(conn, run))
        except Exception as e:      # the timer must survive anything
            log("run_plan's reply failed: %s: %s" % (type(e).__name__, e))
        return True

    def _tick(self):
        self.in_tick = True
        try:
            return self._tick_run()
        finally:
            self.in_tick = False

    def _tick_run(self):
        self.ticks += 1
        done_before = self.done
        budget_end = time.perf_counter() + TICK_BUDGET_S
        while time.perf_counter() < budget_end:
            if self.active is not None:
                if not self._advance_plan(budget_end):
                    break       # the budget is spent: the rest after this redraw
                continue
            try:
                conn, req, arrival, blob = self.queue.get_nowait()
            except queue.Empty:
                break
            finished, send = True, None
            try:
                finished, send = self._run(conn, req, arrival, blob)
            except Exception as e:      # the timer must survive anything (it would be unregistered)
                log("main-thread request failed: %s: %s" % (type(e).__name__, e))
            finally:
                if finished:
                    try:
                        self._finish(send)
                    except Exception as e:
                        log("reply failed: %s: %s" % (type(e).__name__, e))
            if s_Flags.shutdown:
                self.stop(from_timer=True)
                return None
        if self.done != done_before:
            self.busy_ticks += 1
        now = time.monotonic()
        if self.queued == self.done and now >= self.next_rebuild and self.snapshot.fresh() is None:
            self.snapshot.rebuild()     # ahead of the next query
            self.next_rebuild = now + max(REBUILD_MIN_GAP_S, self.snapshot.build_ms / 100.0)
        if self.server.changed != self.redraw_seen:
            self.redraw_seen = self.server.changed
            s_redraw_panels()
        return 0.0 if self.active is not None else TICK_S      # a plan goes on right after the redraw

    def stop(self, from_timer=False):
        self.server.stopping = True
        self.server.wake()
        self.thread.join(2.0)
        sys.setswitchinterval(self.switch_before)
        if not from_timer and bpy.app.timers.is_registered(self.tick_fn):
            bpy.app.timers.unregister(self.tick_fn)
        for name in HANDLERS:
            handlers = getattr(bpy.app.handlers, name)
            if self.handler_fn in handlers:
                handlers.remove(self.handler_fn)
        self.server.close()
        self._drain_lost()
        transaction.end_undo_bracket()
        global SERVICE
        if SERVICE is self:
            SERVICE = None
        s_redraw_panels()
        log("stopped")


    def _drain_lost(self):
        """Stopping (main thread): the timer runs no more, so a lost client's plan is rolled back
        here; other queued requests are dropped (their connection is closed)."""
        while True:
            try:
                conn, req, _arrival, _blob = self.queue.get_nowait()
            except queue.Empty:
                return
            if req is CLIENT_LOST:
                try:
                    transaction.link_lost(conn.serial, conn.drop_reason)
                except Exception as e:
                    log("rollback after a lost client failed: %s: %s" % (type(e).__name__, e))


def s_read_only(req):
    cmd = req.get("cmd")
    return isinstance(cmd, str) and cmd in READ_ONLY


def s_change_handler(snapshot, in_tick=lambda: False):
    @bpy.app.handlers.persistent        # survives loading another .blend
    def on_change(*_args):
        REVISION.bump()                 # a person may have added, removed or renamed objects
        if not in_tick() and snapshot.build_cpu_ms <= NOTICE_REBUILD_MAX_MS:
            try:                        # right after an evaluation: no view_layer.update() here
                # not marked stale first: a redraw's evaluation of what a write already
                # published keeps the snapshot fresh, so a read never waits on it (issue 28)
                snapshot.rebuild(update=False, keep_if_same=True)
                return
            except Exception as e:      # stale is safe: a query then waits for the main thread
                log("snapshot rebuild after a change failed: %s: %s" % (type(e).__name__, e))
        snapshot.invalidate()
    return on_change


def s_redraw_panels():
    wm = getattr(bpy.context, "window_manager", None)
    for win in (wm.windows if wm else ()):
        for area in win.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


# The running service (None when stopped), why the last start failed, where its token came from.
SERVICE = None
LAST_ERROR = ""
TOKEN_WHERE = ""


def start(host, port, token, port_file=None, allow_plain_remote=False):
    """Start (or restart) the service. Returns it, or None with LAST_ERROR set. A peer off
    loopback is refused unless allow_plain_remote (the link is authenticated, not encrypted)."""
    global SERVICE, LAST_ERROR
    stop()
    try:
        SERVICE = GuiService(host, port, token, port_file, allow_plain_remote)
        LAST_ERROR = ""
    except (OSError, ValueError, OverflowError) as e:
        SERVICE = None
        LAST_ERROR = "cannot listen on %s:%s: %s" % (host, port, e)
        log(LAST_ERROR)
    s_redraw_panels()
    return SERVICE


def stop():
    if SERVICE is not None:
        SERVICE.stop()


def start_configured():
    """Start with the add-on's settings: the token from the environment or the token file
    (generated there when missing or empty)."""
    global LAST_ERROR, TOKEN_WHERE
    s = settings.current()
    try:
        token, TOKEN_WHERE = tokens.resolve_token(s.token_file)
    except OSError as e:
        stop()
        LAST_ERROR = "no token: cannot read or write %s: %s" % (s.token_file, e)
        log(LAST_ERROR)
        s_redraw_panels()
        return None
    return start(s.host, s.port, token, allow_plain_remote=s.allow_plain_remote)
