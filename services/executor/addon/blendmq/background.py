"""background — the headless runtime (blender -b): bpy.app.timers do not fire once the startup
script returns, so the server runs its own select() loop on the main thread until `shutdown`
or SIGTERM/SIGINT. A lost client's open plan is rolled back right there, in the loop, before
the next connection is accepted (transaction.link_lost)."""
import os
import select
import signal

from . import transaction
from .commands import answer_cancel, finish_plan, handle_request, s_Flags, start_plan
from .plan_run import CANCELS
from .protocol import FrameError
from .log import log
from .server import Server


def write_port_file(path, port):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, path)       # readers never see a partial file


def run_background(host, port, token, port_file=None, socket_path=None):
    """Serve on the main thread until shutdown or SIGTERM/SIGINT: on TCP (host, port), or on the
    unix socket socket_path (0600) when given."""
    s_Flags.shutdown = False
    server = None

    def on_request(conn, req, blob, arrival):
        if req.get("cmd") == "run_plan":
            s_run_plan(server, conn, req, arrival, on_request)
            return
        reply, rblob = handle_request(req, arrival, link=conn.serial, blob=blob)
        conn.send(reply, rblob)
        if s_Flags.shutdown:
            server.stopping = True

    def on_cancel(conn, req):
        answer_cancel(conn, req, lambda plan_id: False)     # read here only between plans

    def on_signal(signum, _frame):
        log("signal %d, stopping" % signum)
        server.stopping = True

    def on_drop(conn):
        try:
            transaction.link_lost(conn.serial, conn.drop_reason)
        except Exception as e:      # the loop must survive anything
            log("rollback after a lost client failed: %s: %s" % (type(e).__name__, e))

    server = Server(host, port, token, on_request, on_drop, on_cancel=on_cancel, socket_path=socket_path)
    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    # The C-level handler writes to this fd, so select() returns at once on a signal.
    old_fd = signal.set_wakeup_fd(server.wake_w.fileno(), warn_on_full_buffer=False)
    try:
        if port_file and not socket_path:
            write_port_file(port_file, server.port)
        log("listening on %s" % server.where)
        while not server.stopping:
            server.poll()
    finally:
        signal.set_wakeup_fd(old_fd)
        for sig, handler in old.items():
            # None means Blender's own C handler was there, which Python cannot reinstate.
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        server.close()
        if port_file:
            try:
                os.unlink(port_file)    # a stale port file would point at a dead port
            except OSError:
                pass
    log("stopped")


def s_run_plan(server, conn, req, arrival, on_request):
    """run_plan on the main thread, steps back to back. Between steps the socket is read
    without blocking: a cancel_plan is answered and noted, other requests wait for the plan's
    end, and a dropped link is handled at once (link_lost rolls the plan back)."""
    waiting = []
    plan_id = [None]

    def running(pid):
        return pid == plan_id[0]

    def poll():
        try:
            while not conn.closed and select.select([conn.sock], [], [], 0)[0]:
                for r, b, a in conn.read():
                    if r.get("cmd") == "cancel_plan":
                        answer_cancel(conn, r, running)
                    else:
                        waiting.append((r, b, a))
        except FrameError as e:
            conn.drop_reason = "protocol error: %s" % (e.args[0] or "refused")
            server.drop_client(conn)
        except (EOFError, OSError) as e:
            conn.drop_reason = "the client closed the connection" if isinstance(e, EOFError) \
                else "connection error: %s" % e
            server.drop_client(conn)
        return plan_id[0] in CANCELS

    run = start_plan(conn, req, arrival, cancelled=poll)
    if run is not None:
        plan_id[0] = run.plan_id
        run.advance()
        finish_plan(conn, run)
    for r, b, a in waiting:
        if conn.closed or conn.dead or server.stopping:
            break
        on_request(conn, r, b, a)
