"""Durable commits (issue 23): a headless Blender killed with kill -9 after a commit comes back,
with the same --state-dir, with its last commit's fingerprint.

  blender -b --factory-startup --python check_durable.py -- ADDON_DIR PALETTE_YAML BLENDER

This Blender is only the client (link_client needs bpy's add-on modules for the handshake);
the Blender under test is a child process started like `blendmq up` starts it:
  blender -b --factory-startup --python blendmq_addon.py -- --port 0 --port-file F
          --token-file T --reset-scene --state-dir D

  * a committed plan, an orphan made by a committed step, then a plan that fails: the
    fingerprint after the failure is the commit's;
  * kill -9, restart with the same state folder: the fingerprint equals the committed one,
    the objects are there (--reset-scene does not empty a folder's committed scene);
  * a plan that is open (not committed) when Blender is killed is not in the restarted scene;
  * scene reset commits too: after it and a kill -9, the scene is still empty.

Exit 0 when every expectation holds, 1 otherwise (each failure printed).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR, PALETTE, BLENDER = argv[0], argv[1], argv[2]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from blendmq import bounds              # noqa: E402
from link_client import TOKEN, Client   # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


expect(bounds.load_palette_file(PALETTE) is True, "palette.yaml loads")
BOUNDS = dict(bounds.s_Palette.bounds)
work = tempfile.mkdtemp(prefix="bmq-durable-")
state_dir = os.path.join(work, "blender-state", "blender")
token_file = os.path.join(work, "token")
with open(token_file, "w") as f:
    f.write(TOKEN + "\n")
os.chmod(token_file, 0o600)


class Blender:
    def __init__(self):
        self.port_file = os.path.join(work, "port")
        if os.path.exists(self.port_file):
            os.unlink(self.port_file)
        self.log = open(os.path.join(work, "blender.log"), "ab")
        self.proc = subprocess.Popen(
            [BLENDER, "-b", "--factory-startup", "--python", os.path.join(ADDON_DIR, "blendmq_addon.py"), "--",
             "--host", "127.0.0.1", "--port", "0", "--port-file", self.port_file, "--token-file", token_file,
             "--reset-scene", "--state-dir", state_dir], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("the Blender under test did not start (see %s/blender.log)" % work)
            time.sleep(0.05)
        self.client = Client(int(open(self.port_file).read()), BOUNDS)
        self.rid = 100

    def call(self, cmd, args):
        self.rid += 1
        self.client.send({"id": self.rid, "cmd": cmd, "args": args})
        while True:
            m = self.client.recv()
            if m.get("id") == self.rid and "ok" in m:
                return m

    def digest(self):
        return (self.call("fingerprint", {}).get("result") or {}).get("digest")

    def kill9(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)
        self.client.sock.close()


def cube(name, size=1.0):
    return {"operation": "bpy.ops.mesh.primitive_cube_add", "params": {"size": size}, "name": name}


b = Blender()
try:
    r = b.call("run_plan", {"plan_id": "p1", "steps": [cube("keep_a"), cube("keep_b", 0.5),
                                                       {"operation": "object.material", "target": "keep_a",
                                                        "params": {"color": [0.2, 0.4, 0.6]}}]})
    res = r.get("result") or {}
    committed = res.get("fingerprint")
    expect(res.get("status") == "done" and committed and len(committed) == 64, "a plan commits: %s" % res)
    expect(b.digest() == committed, "the live fingerprint is the committed one")
    expect(os.path.isfile(os.path.join(state_dir, "CURRENT")), "the state folder holds a commit")
    r = b.call("run_plan", {"plan_id": "p2", "steps": [{"operation": "bpy.ops.object.delete", "target": "keep_a",
                                                        "params": {}},
                                                       {"operation": "object.location", "target": "nope",
                                                        "params": {"value": [0, 0, 0]}}]})
    expect(((r.get("result") or {}).get("rollback") or {}).get("exact") is True, "a failing plan rolls back exactly")
    expect(b.digest() == committed, "and the fingerprint is the commit's")
    # a plan left open when Blender dies
    expect(b.call("plan_begin", {"plan_id": "open"}).get("ok"), "a plan is opened")
    expect(b.call("run_step", {"plan_id": "open", "step": cube("uncommitted")}).get("ok"), "and changes the scene")
    b.kill9()

    b = Blender()
    expect(b.digest() == committed, "after kill -9 and a restart: the committed fingerprint")
    names = (b.call("scene_names", {}).get("result") or {}).get("names", [])
    expect("keep_a" in names and "keep_b" in names and "uncommitted" not in names,
           "the committed objects are back, the open plan's are not: %s" % names)

    r = b.call("reset_scene", {})
    empty = (r.get("result") or {}).get("fingerprint")
    expect(r.get("ok") and empty and empty != committed, "scene reset commits a new fingerprint: %s" % r)
    b.kill9()
    b = Blender()
    expect(b.digest() == empty, "after kill -9: the reset scene")
    expect((b.call("scene_names", {}).get("result") or {}).get("count") == 0, "with no objects")
    b.call("shutdown", {})
    b.proc.wait(30)
finally:
    if b.proc.poll() is None:
        b.proc.kill()
        b.proc.wait(30)
    if FAILURES:
        try:
            print(open(os.path.join(work, "blender.log"), errors="replace").read()[-3000:])
        except OSError:
            pass
    shutil.rmtree(work, ignore_errors=True)

print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
