"""No half-built scenes in a GUI Blender (issue 17), run inside a real GUI Blender under Xvfb by
run_gui_drop.sh:

  blender --factory-startup --python gui_drop_driver.py -- --zip build/blendmq-addon.zip --work DIR

The add-on is installed from its zip and listens (I/O thread + main-thread timer). A raw client
opens a plan (plan_begin with a cid), runs three steps, and drops the connection; at once a new
client connects. Checked: the plan was rolled back on Blender's main thread (its objects gone,
global undo back on, no transaction open); the new client's hello, answered only after that
rollback, reports it (removed objects, story id, steps run); it stays reported until
interrupted_ack; a committed plan is not touched by a later drop. Results go to DIR/result.json.
"""
import json
import os
import secrets
import socket
import struct
import sys
import threading
import time
import traceback

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
OPTS = dict(zip(argv[0::2], argv[1::2]))
WORK, ZIP = OPTS["--work"], OPTS["--zip"]
RESULT = {"ok": False, "checks": [], "error": None}
CUBE = "bpy.ops.mesh.primitive_cube_add"
# hello's palette bounds for CUBE (as blender_link.c sends them from proto/palette.yaml)
CUBE_BOUNDS = {CUBE: {"location": {"type": "vec3", "min": -10000, "max": 10000, "default": [0, 0, 0]}}}


def log(msg):
    print("gui-drop: " + msg, file=sys.stderr, flush=True)


def check(cond, what):
    RESULT["checks"].append({"ok": bool(cond), "what": what})
    log(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        raise AssertionError(what)


class Client:
    """The link's client side in Python (protocol.py): challenge, hello, requests."""

    def __init__(self, port, token):
        from blendmq import tokens
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.next_id = 1
        self.macs = None        # after hello: every frame carries its MAC (link 3)
        ns = bytes.fromhex(self.frame()["challenge"]["nonce"])
        nc = secrets.token_bytes(tokens.NONCE_BYTES)
        self.hello = self.call("hello", {"nonce": nc.hex(), "operations": [CUBE], "bounds": CUBE_BOUNDS,
                                         "mac": tokens.client_proof(token, ns, nc).hex()})
        self.macs = tokens.FrameMacs(tokens.session_key(token, ns, nc), "client")

    def frame(self):
        head = b""
        while len(head) < 8:
            got = self.sock.recv(8 - len(head))
            if not got:
                raise EOFError("closed")
            head += got
        hlen, blen = struct.unpack(">II", head)
        body = b""
        tail = 32 if self.macs else 0
        while len(body) < hlen + blen + tail:
            body += self.sock.recv(hlen + blen + tail - len(body))
        if self.macs and not self.macs.check(body[hlen + blen:], head, body[:hlen + blen]):
            raise ValueError("the add-on's frame failed its MAC")
        return json.loads(body[:hlen])

    def call(self, cmd, args=None):
        rid, self.next_id = self.next_id, self.next_id + 1
        js = json.dumps({"id": rid, "cmd": cmd, "args": args or {}}).encode()
        data = struct.pack(">II", len(js), 0) + js
        self.sock.sendall(data + (self.macs.seal(data) if self.macs else b""))
        return self.frame()

    def close(self):
        self.sock.close()


def in_thread(fn):
    """Run fn in a thread (the main loop must keep turning: it runs the commands)."""
    box = {"done": False}

    def run():
        try:
            box["value"] = fn()
        except Exception:
            box["error"] = traceback.format_exc()
        box["done"] = True
    threading.Thread(target=run, daemon=True).start()
    return box


def wait(box, timeout=60):
    end = time.monotonic() + timeout
    while not box["done"]:
        if time.monotonic() > end:
            check(False, "in time")
        yield
    if "error" in box:
        log(box["error"])
        check(False, "the client ran without an exception")
    return box.get("value")


def scenario():
    import blendmq.gui as gui
    import blendmq.transaction as transaction
    svc = gui.SERVICE
    check(svc is not None and svc.server.port > 0, "the add-on listens (%s)" % gui.LAST_ERROR)
    port, token = svc.server.port, svc.token
    prefs = bpy.context.preferences
    undo_before = prefs.edit.use_global_undo
    before = set(bpy.data.objects.keys())

    def drop_then_reconnect():
        c = Client(port, token)
        replies = [c.call("plan_begin", {"plan_id": "gui-drop", "cid": "story-gui-drop", "steps": 10})]
        for i in range(3):
            replies.append(c.call("run_step", {"plan_id": "gui-drop", "step": {
                "operation": CUBE, "name": "gd%d" % i, "params": {"location": [i * 3, 0, 0]}}}))
        c.close()                   # dropped mid-plan; a new client at once
        c2 = Client(port, token)
        c2.close()
        return replies, c2.hello

    replies, hello = yield from wait(in_thread(drop_then_reconnect))
    check(all(r.get("ok") for r in replies), "plan_begin and three steps ran (%s)" % [r.get("error") for r in replies])
    result = hello.get("result", {})
    reports = result.get("interrupted")
    check(isinstance(reports, list) and len(reports) == 1 and "open_plan" not in result,
          "the next hello reports one interrupted plan, none open (%s)" % json.dumps(result)[:400])
    rep = reports[0]
    check(rep["plan_id"] == "gui-drop" and rep["cid"] == "story-gui-drop" and rep["steps_run"] == 3
          and rep["steps_total"] == 10, "the report names the plan, its story and the steps run")
    check(rep["rollback"]["removed"] == ["gd0", "gd1", "gd2"] and set(rep["rollback"]["restored"]) <= before,
          "the report lists what was removed, and restored only what existed (%s)" % rep["rollback"])
    check(set(bpy.data.objects.keys()) == before, "the plan's objects are gone from the GUI scene")
    check(transaction.TXN.current is None, "no transaction is left open")
    check(prefs.edit.use_global_undo == undo_before, "global undo is back as it was")

    def again_then_ack():
        c = Client(port, token)
        first = c.hello
        ack = c.call("interrupted_ack", {"ids": [rep["id"]]})
        c.close()
        c2 = Client(port, token)
        c2.close()
        return first, ack, c2.hello

    first, ack, last = yield from wait(in_thread(again_then_ack))
    check([r["id"] for r in first["result"]["interrupted"]] == [rep["id"]], "unacknowledged, it is reported again")
    check(ack.get("ok") and ack["result"]["acked"] == 1, "interrupted_ack forgets it")
    check(last["result"]["interrupted"] == [], "acknowledged, it is not reported any more")

    def commit_then_drop():
        c = Client(port, token)
        out = [c.call("plan_begin", {"plan_id": "gui-keep", "cid": "story-gui-keep"}),
               c.call("run_step", {"plan_id": "gui-keep", "step": {"operation": CUBE, "name": "gkeep"}}),
               c.call("plan_commit", {"plan_id": "gui-keep"})]
        c.close()
        c2 = Client(port, token)
        c2.close()
        return out, c2.hello

    out, hello = yield from wait(in_thread(commit_then_drop))
    check(all(r.get("ok") for r in out), "a plan is committed")
    check(hello["result"]["interrupted"] == [] and "gkeep" in bpy.data.objects,
          "a committed plan stays after the drop and nothing is reported")
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
            return 0.05
        except StopIteration:
            pass
        except Exception:
            RESULT["error"] = traceback.format_exc()
            log(RESULT["error"])
        with open(os.path.join(WORK, "result.json"), "w") as f:
            json.dump(RESULT, f, indent=1)
        bpy.ops.wm.quit_blender()
        return None

    # persistent: a rollback loads the plan's snapshot (issue 23), which drops other timers
    bpy.app.timers.register(tick, first_interval=0.5, persistent=True)


main()
