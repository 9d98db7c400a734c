"""The GUI test, run inside a real GUI Blender (under Xvfb) by run_gui_test.sh:

  blender --factory-startup --enable-event-simulate --python gui_driver.py -- \
      --zip build/blendmq-addon.zip --bin-dir build/bin --work DIR

It installs and enables the add-on zip as a user would, lets it listen on a free port with a
generated token, starts a stack (`blendmq up --ipc --no-blender`) whose executor connects to
this Blender, and checks, through the whole stack: a 3-step plan runs; read-only queries see
it; one undo removes the whole plan and redo brings it back; the panel's prompt box sends
"build a snowman" to the gateway over HTTP and follows the plan to its end; the panel is on
screen (viewport_screenshot through the executor, kept as DIR/panel.png). A rollback and a
lost client put global undo back as it was.

The scenario is a generator driven by a timer, so Blender's main loop (which runs the add-on's
commands) keeps turning while it waits; the CLI runs in threads. Results go to DIR/result.json.
"""
import json
import os
import stat
import subprocess
import sys
import threading
import time
import traceback

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
OPTS = dict(zip(argv[0::2], argv[1::2]))
WORK, BIN, ZIP = OPTS["--work"], OPTS["--bin-dir"], OPTS["--zip"]
RUN_DIR = os.path.join(WORK, "run")
RESULT = {"ok": False, "checks": [], "error": None}
PLAN = [
    {"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "name": "gui_body",
     "params": {"radius": 1.0, "location": [3, 0, 1]}},
    {"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "name": "gui_head",
     "params": {"radius": 0.6, "location": [3, 0, 2.4]}},
    {"operation": "bpy.ops.mesh.primitive_cone_add", "name": "gui_hat",
     "params": {"radius1": 0.5, "depth": 0.8, "location": [3, 0, 3.3]}},
]
PLAN_NAMES = [s["name"] for s in PLAN]


def log(msg):
    print("gui-test: " + msg, file=sys.stderr, flush=True)


def check(cond, what):
    RESULT["checks"].append({"ok": bool(cond), "what": what})
    log(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        raise AssertionError(what)


class Job:
    """A command run in a thread (Blender's main loop must keep turning meanwhile)."""

    def __init__(self, args, env=None, timeout=300):
        self.args, self.rc, self.out, self.err = args, None, "", ""
        self.done = False
        t = threading.Thread(target=self._run, args=(env, timeout), daemon=True)
        t.start()

    def _run(self, env, timeout):
        try:
            if os.environ.get("BMQ_GUI_RELAY"):     # a Blender in a root of its own: run it on the host
                self.rc, self.out, self.err = s_relay(self.args, env, timeout)
            else:
                p = subprocess.run(self.args, env=env, capture_output=True, text=True, timeout=timeout)
                self.rc, self.out, self.err = p.returncode, p.stdout, p.stderr
        except Exception as e:
            self.rc, self.err = -1, str(e)
        self.done = True


def s_relay(args, env, timeout):
    """(rc, out, err) of a command run by host_relay.py (run_gui_test.sh starts it for a Blender
    in a root of its own, which cannot run this machine's programs: issue 30)."""
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout + 10)
        s.connect(os.environ["BMQ_GUI_RELAY"])
        s.sendall((json.dumps({"args": args, "env": env, "timeout": timeout}) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    r = json.loads(data)
    return r["rc"], r["out"], r["err"]


def wait(cond, timeout, what):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            check(False, "in time: " + what)
        yield


def run(args, env=None, timeout=300):
    job = Job(args, env, timeout)
    yield from wait(lambda: job.done, timeout + 5, " ".join(args[1:5]))
    if job.rc != 0:
        log("%s exited %s\nstdout: %s\nstderr: %s" % (args, job.rc, job.out[-2000:], job.err[-2000:]))
    return job


def stack_env(port, token_file):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLENDMQ_", "GEMINI_", "OPENAI_"))}
    env.update(BLENDMQ_BLENDER_HOST="127.0.0.1", BLENDMQ_BLENDER_PORT=str(port),
               BLENDMQ_BLENDER_TOKEN_FILE=token_file, BLENDMQ_PLANNER_BACKEND="offline")
    return env


def blendmq(*args):
    return [os.path.join(BIN, "blendmq"), "--run-dir", RUN_DIR] + list(args)


def names():
    return set(bpy.data.objects.keys())


def view3d():
    win = bpy.context.window_manager.windows[0]
    area = max((a for a in win.screen.areas if a.type == "VIEW_3D"), key=lambda a: a.width * a.height)
    region = next(r for r in area.regions if r.type == "WINDOW")
    return win, area, region


def undo(redo=False):
    win, area, region = view3d()
    with bpy.context.temp_override(window=win, area=area, region=region):
        return bpy.ops.ed.redo() if redo else bpy.ops.ed.undo()


def raw_calls(port, token, requests, out):
    """A thread: hello, then each request in turn; the replies go to out (a list)."""
    import socket
    import struct
    import secrets
    from blendmq import tokens

    macs = []       # after hello: every frame carries its MAC (link 3)

    def frame(sock):
        head = b""
        while len(head) < 8:
            head += sock.recv(8 - len(head))
        hlen, blen = struct.unpack(">II", head)
        body = b""
        tail = tokens.FRAME_MAC_BYTES if macs else 0
        while len(body) < hlen + blen + tail:
            body += sock.recv(hlen + blen + tail - len(body))
        if macs and not macs[0].check(body[hlen + blen:], head, body[:hlen + blen]):
            raise ValueError("the add-on's frame failed its MAC")
        return json.loads(body[:hlen])

    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        ns = bytes.fromhex(frame(sock)["challenge"]["nonce"])      # link v2: answer the challenge
        nc = secrets.token_bytes(tokens.NONCE_BYTES)
        hello = {"id": 1, "cmd": "hello", "args": {"nonce": nc.hex(), "operations": [],
                                                   "mac": tokens.client_proof(token, ns, nc).hex()}}
        for req in [hello] + requests:
            js = json.dumps(req).encode()
            data = struct.pack(">II", len(js), 0) + js
            sock.sendall(data + (macs[0].seal(data) if macs else b""))
            out.append(frame(sock))
            if not macs:
                macs.append(tokens.FrameMacs(tokens.session_key(token, ns, nc), "client"))
        sock.close()
    except Exception as e:
        out.append({"exception": str(e)})
    out.append(None)


def scenario():
    import blendmq.gateway_client as gateway_client
    import blendmq.gui as gui
    import blendmq.transaction as transaction
    from blendmq.commands import handle_request

    log("Blender %s, Python %s%s" % (bpy.app.version_string, sys.version.split()[0],
                                     " (in a root of its own: commands run by host_relay.py)"
                                     if os.environ.get("BMQ_GUI_RELAY") else ""))
    # -- the zip installs and enables like any add-on; the server listens with a new token
    svc = gui.SERVICE
    check(svc is not None and svc.server.port > 0, "the enabled add-on listens on a free port (%s)" % gui.LAST_ERROR)
    token_file = os.environ["BLENDMQ_TOKEN_FILE"]
    mode = stat.S_IMODE(os.stat(token_file).st_mode)
    with open(token_file) as f:
        check(f.read().strip() == svc.token and len(svc.token) >= 32 and mode == 0o600,
              "a token was generated into the token file (0600)")
    check(gui.TOKEN_WHERE.startswith("new, saved to"), "the panel says where the token came from")

    # -- malformed requests get error replies; the server (its I/O thread, its timer) lives on
    replies = []
    threading.Thread(target=raw_calls, daemon=True, args=(svc.server.port, svc.token, [
        {"id": 2, "cmd": ["scene_info"]}, {"id": 3, "cmd": "scene_info", "args": []},
        {"id": 4, "cmd": "object_info", "args": {"name": 5}}, {"id": "x", "cmd": "ping"},
        {"id": 5, "cmd": "scene_info", "args": {"limit": "all"}}, {"id": 6, "cmd": "ping"}], replies)).start()
    yield from wait(lambda: replies and replies[-1] is None, 60, "the malformed requests are answered")
    errors = [r.get("error") for r in replies[1:-1]]
    check(errors == ["unknown command ['scene_info']", "args must be an object", "object_info: name must be a string",
                     "request id must be an integer", "scene_info: limit must be an integer", None]
          and replies[-2].get("result") == {"pong": True}, "malformed requests get error replies (%s)" % errors)

    # -- the whole stack, its executor connected to this Blender
    env = stack_env(svc.server.port, token_file)
    job = yield from run(blendmq("up", "--ipc", "--no-blender"), env, timeout=180)
    check(job.rc == 0, "blendmq up --ipc --no-blender")
    yield from wait(lambda: svc.server.client is not None and svc.server.client.authed, 60,
                    "the executor connects and authenticates")
    end = time.monotonic() + 30        # the executor's state reaches the gateway with its heartbeat
    while True:
        job = yield from run(blendmq("--json", "status"), env)
        status = json.loads(job.out.splitlines()[0]) if job.out.startswith("{") else {}
        connected = any(s["name"] == "executor" and s.get("state") == "blender connected"
                        for s in status.get("services", []))
        if connected or time.monotonic() > end:
            break
    check(connected, "blendmq status: the executor reports Blender connected")
    http = status["endpoints"]["http"]

    # -- a 3-step plan through gateway, validator and executor; one undo step
    prefs = bpy.context.preferences
    prefs.is_dirty = False          # installing the add-on changed them; the plan must not
    before = names()
    plan_file = os.path.join(WORK, "plan.json")
    with open(plan_file, "w") as f:
        json.dump(PLAN, f)
    job = yield from run(blendmq("--json", "plan", "run", plan_file), env)
    lines = [json.loads(x) for x in job.out.splitlines() if x.startswith("{")]
    check(job.rc == 0, "blendmq plan run (3 steps) exits 0")
    check(names() - before == set(PLAN_NAMES), "the plan created its three objects in the GUI scene")
    check(prefs.edit.use_global_undo and not prefs.is_dirty,
          "global undo is back on after the plan, preferences unchanged")
    job = yield from run(blendmq("--json", "scene", "info"), env)
    listed = {o["name"] for o in json.loads(job.out.splitlines()[0])["objects"]}
    check(set(PLAN_NAMES) <= listed, "scene info (snapshot) lists the new objects")
    check(undo() == {"FINISHED"} and names() == before, "one undo removes all three objects")
    job = yield from run(blendmq("--json", "scene", "info"), env)
    listed = {o["name"] for o in json.loads(job.out.splitlines()[0])["objects"]}
    check(not (set(PLAN_NAMES) & listed), "scene info after undo: the snapshot followed the undo")
    check(undo(redo=True) == {"FINISHED"} and names() - before == set(PLAN_NAMES),
          "redo brings the whole plan back")
    RESULT["plan_output"] = lines[-1] if lines else None

    # -- the I/O thread's pre-encoded replies are, byte for byte, what handle_request would send
    from blendmq.protocol import encode
    odd = bpy.data.objects.new('W\u00fcrfel \u2603 "q"', None)
    bpy.context.scene.collection.objects.link(odd)
    data = svc.snapshot.rebuild()
    for req in ({"id": 7, "cmd": "scene_info"}, {"id": 8, "cmd": "scene_info", "args": {"limit": 2, "offset": 1}},
                {"id": 9, "cmd": "scene_info", "args": {"limit": -5, "offset": 99999}},
                {"id": 10, "cmd": "scene_info", "args": None, "deadline_ms": 5000},
                {"id": 2 ** 40, "cmd": "scene_info", "args": {"limit": 1000, "extra": 1}},
                {"id": 11, "cmd": "object_info", "args": {"name": odd.name}},
                {"id": 12, "cmd": "object_info", "args": {"name": "gui_hat"}}):
        fast = data.reply_frame(req, time.monotonic())
        slow = encode(*handle_request(req, time.monotonic(), svc.snapshot.table(data)))
        same = fast is not None and fast[8:].split(b',"bpy_ms":')[0] == slow[8:].split(b',"bpy_ms":')[0]
        check(same, "pre-encoded reply equals handle_request's for %s" % json.dumps(req))
    for req in ({"id": 13, "cmd": "object_info", "args": {"name": "nothing"}},
                {"id": 14, "cmd": "scene_info", "args": {"limit": "x"}}, {"id": True, "cmd": "scene_info"}):
        check(data.reply_frame(req, time.monotonic()) is None, "errors are left to handle_request: %s" % json.dumps(req))
    bpy.data.objects.remove(odd)

    # -- read-only queries answered by the I/O thread (no main-thread wait) once fresh
    before_io = svc.io_answers
    for _ in range(3):
        job = yield from run(blendmq("--json", "scene", "info"), env)
        check(job.rc == 0, "scene info")
    check(svc.io_answers > before_io, "scene info answered from the snapshot by the I/O thread")

    # -- the panel's prompt box: HTTP to the gateway, live progress from SSE
    addon_prefs = prefs.addons["blendmq"].preferences
    ui = bpy.context.window_manager.blendmq
    ui.prompt = "build a snowman"
    addon_prefs.gateway_url = "http://127.0.0.1:9"       # nothing listens there
    check(bpy.ops.blendmq.send_prompt() == {"FINISHED"}, "Send with no gateway starts")
    yield from wait(lambda: gateway_client.PROMPT.finished, 60, "the failed prompt ends")
    check(gateway_client.PROMPT.state == "error" and "cannot reach the gateway" in gateway_client.PROMPT.message,
          "an unreachable gateway is reported in the panel (%s)" % gateway_client.PROMPT.message)
    addon_prefs.gateway_url = http
    addon_prefs.gateway_token_file = os.path.join(RUN_DIR, "keys", "panel.token")   # the panel's key, made by up
    before = names()
    check(bpy.ops.blendmq.send_prompt() == {"FINISHED"}, "the panel's Send operator starts")
    yield from wait(lambda: gateway_client.PROMPT is not None and gateway_client.PROMPT.finished, 240,
                    "the prompt's plan ends")
    p = gateway_client.PROMPT
    log("prompt: state %s, %d/%d steps, %s; %s" % (p.state, p.done_steps(), p.total, p.message, p.note))
    check(p.state == "done" and p.total > 3 and p.done_steps() == p.total, "the panel followed the snowman to done")
    check(p.message.startswith("done:") and abs(ui.progress - 100.0) < 1e-3, "the panel shows done and a full bar")
    made = set()
    for step in p.steps.values():
        made.update(step.get("objects") or [])
    check(made and names() - before == made, "the snowman is in the scene (%d objects)" % len(made))
    RESULT["prompt"] = {"plan_id": p.plan_id, "steps": p.total, "message": p.message}

    # -- rollback and a lost client put global undo back (direct calls, main thread)
    def call(cmd, args):
        return handle_request({"id": 1, "cmd": cmd, "args": args}, time.monotonic())[0]

    check(call("plan_begin", {"plan_id": "gui-rb"})["ok"] and not prefs.edit.use_global_undo,
          "plan_begin switches global undo off")
    before = names()
    call("run_step", {"step": PLAN[0] | {"name": "gui_rb"}, "plan_id": "gui-rb"})
    rb = call("plan_rollback", {"plan_id": "gui-rb"})
    check(rb["ok"] and names() == before and prefs.edit.use_global_undo and not prefs.is_dirty,
          "plan_rollback removes the object and puts global undo back")
    call("plan_begin", {"plan_id": "gui-lost"})
    transaction.end_undo_bracket()
    check(prefs.edit.use_global_undo, "a lost client puts global undo back")
    call("plan_commit", {"plan_id": "gui-lost"})
    yield               # a rollback goes back by undo: UI changes wait for a tick with a fresh context

    # -- what the user sees: the sidebar open on the blendmq tab, shot through the stack
    win, area, _region = view3d()
    area.spaces[0].show_region_ui = True
    yield
    ui_region = next(r for r in area.regions if r.type == "UI")
    x, y = ui_region.x + ui_region.width // 2, ui_region.y + ui_region.height // 2
    win.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    win.event_simulate(type="TAB", value="PRESS", ctrl=True, shift=True, x=x, y=y)   # the last tab
    win.event_simulate(type="TAB", value="RELEASE", ctrl=True, shift=True, x=x, y=y)
    for _ in range(5):
        yield
    shot = os.path.join(WORK, "panel.png")
    job = yield from run([os.path.join(BIN, "gui_scene_call"), os.path.join(RUN_DIR, "blendmq.yaml"),
                          "viewport_screenshot", '{"area": "WINDOW", "max_size": 1280}', shot], env)
    info = json.loads(job.out.splitlines()[0]) if job.rc == 0 else {}
    head = b""
    if job.rc == 0:
        with open(shot, "rb") as f:
            head = f.read(8)
    check(head == b"\x89PNG\r\n\x1a\n" and info.get("width") == 1280 and info.get("height") == 800,
          "viewport_screenshot through the executor returns a 1280x800 PNG")
    job = yield from run([os.path.join(BIN, "gui_scene_call"), os.path.join(RUN_DIR, "blendmq.yaml"),
                          "viewport_screenshot", '{"max_size": 256}', os.path.join(WORK, "small.png")], env)
    info = json.loads(job.out.splitlines()[0]) if job.rc == 0 else {}
    check(info.get("area") == "VIEW_3D" and info.get("width") == 256 and 100 < info.get("height", 0) < 256,
          "the 3D viewport alone, its longer side bounded by max_size (%s)" % info)

    for _ in range(15):     # the lower half of the sidebar, for whoever reads the pictures
        win.event_simulate(type="WHEELDOWNMOUSE", value="PRESS", x=x, y=y)
    for _ in range(5):
        yield
    job = yield from run([os.path.join(BIN, "gui_scene_call"), os.path.join(RUN_DIR, "blendmq.yaml"),
                          "viewport_screenshot", '{"max_size": 1280}', os.path.join(WORK, "panel_lower.png")], env)
    check(job.rc == 0, "a second screenshot, the sidebar scrolled down")

    job = yield from run(blendmq("down"), env)
    check(job.rc == 0, "blendmq down")

    # -- the panel's operators, then disabling the add-on stops everything it started
    old_token = svc.token
    check(bpy.ops.blendmq.token_new() == {"FINISHED"} and gui.SERVICE is not None
          and gui.SERVICE.token != old_token and open(token_file).read().strip() == gui.SERVICE.token,
          "New token writes a new token file and restarts the server with it")
    check(bpy.ops.blendmq.server_stop() == {"FINISHED"} and gui.SERVICE is None, "Stop stops listening")
    check(bpy.ops.blendmq.server_start() == {"FINISHED"} and gui.SERVICE is not None, "Start listens again")
    handler = gui.SERVICE.handler_fn
    bpy.ops.preferences.addon_disable(module="blendmq")
    check(gui.SERVICE is None and handler not in bpy.app.handlers.depsgraph_update_post
          and not hasattr(bpy.types.WindowManager, "blendmq"),
          "disabling the add-on stops the server and removes its handlers and panel")
    check("Traceback" not in open(os.environ["BMQ_GUI_LOG"]).read() if os.environ.get("BMQ_GUI_LOG") else True,
          "no Python traceback in Blender's log (panel drawing included)")
    RESULT["ok"] = True


def main():
    bpy.context.preferences.view.show_splash = False
    try:
        bpy.ops.preferences.addon_install(filepath=ZIP, overwrite=True)
        bpy.ops.preferences.addon_enable(module="blendmq")
    except Exception:
        RESULT["error"] = traceback.format_exc()
    steps = scenario() if RESULT["error"] is None else iter(())

    def tick():
        try:
            next(steps)
            return 0.1
        except StopIteration:
            pass
        except Exception:
            RESULT["error"] = traceback.format_exc()
            log(RESULT["error"])
            subprocess.run(blendmq("down"), capture_output=True)
        with open(os.path.join(WORK, "result.json"), "w") as f:
            json.dump(RESULT, f, indent=1)
        bpy.ops.wm.quit_blender()
        return None

    bpy.app.timers.register(tick, first_interval=0.5, persistent=True)   # a rollback may load a file


main()
