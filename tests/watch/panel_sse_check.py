"""The panel's gateway client (addon/blendmq/gateway_client.py) across a gateway restart, in a real
Blender (background mode, so no timer drains its queue: this script does, as the panel's timer would).

    blender -b --factory-startup --python panel_sse_check.py -- RUN_DIR ADDON_DIR HTTP_BASE

A plan of the executor's is held mid-step (its Blender stopped with SIGSTOP), so the plan the
client follows waits in the executor's queue; the gateway is then killed (kill -9; `up`'s
supervisor starts it again on the same port). The client posts a plan (POST /api/plans) rather than
a prompt: planning a prompt asks Blender for the scene, which is held. The client must reconnect its event stream with Last-Event-ID and show
the gateway's `gap` line; once Blender goes on (SIGCONT) it must follow the plan to its end through
the new gateway. Exit code 0 when it did; 1 with the reason on stderr."""
import json
import os
import signal
import sys
import time
import urllib.request

argv = sys.argv[sys.argv.index("--") + 1:]
run_dir, addon_dir, base = argv[:3]
stopped = []                                    # a process this script stopped, to go on whatever happens
sys.path.insert(0, addon_dir)
from blendmq import gateway_client  # noqa: E402  (after the path is set)


def fail(why):
    for pid in stopped:
        os.kill(pid, signal.SIGCONT)
    sys.stderr.write("panel_sse_check: FAIL: %s\n" % why)
    sys.stderr.flush()
    os._exit(1)


def drain(job, state):
    while True:
        try:
            kind, payload = job.events.get_nowait()
        except Exception:
            return
        state.apply(kind, payload)
        sys.stderr.write("panel_sse_check: %s %s\n" % (kind, json.dumps(payload)[:200]))


def wait(job, state, what, cond, timeout):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        drain(job, state)
        if cond():
            return
        time.sleep(0.05)
    fail("%s (state %s, message %s, note %s, gaps %s)" % (what, state.state, state.message, state.note, state.gaps))


token = open(os.path.join(run_dir, "keys", "panel.token")).read().strip()


def request(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=30) as resp:
        return json.loads(resp.read())


class PlanJob(gateway_client.PromptJob):
    """The panel's client following a plan given as is: its stream and poller are the ones under test."""

    def __init__(self, base_url, token, steps):
        self.steps = steps                      # before the job's thread asks for it
        super().__init__(base_url, token, "a plan of %d steps" % len(steps))

    def _submit(self):
        return self._json("POST", "/api/plans", {"plan": self.steps}).get("plan_id")


def spheres(n, y):
    return [{"operation": "bpy.ops.mesh.primitive_uv_sphere_add",
             "params": {"segments": 16, "ring_count": 8, "radius": 0.1, "location": [i, y, 9]}} for i in range(n)]


def pid_of(name):
    with open(os.path.join(run_dir, "pids", name + ".pid")) as f:
        return int(f.read())


# a busy executor: a plan of its own, held mid-step by stopping Blender (a step may take 30 s)
held = request("POST", "/api/plans", {"plan": spheres(40, 9)})["plan_id"]
until = time.monotonic() + 60
while request("GET", "/api/plans/" + held).get("state") != "executing":
    if time.monotonic() > until:
        fail("the executor's own plan does not start")
    time.sleep(0.05)
def with_descendants(pid):
    """pid and every process under it: pids/blender.pid names `blendmq blender-run`, whose
    bubblewrap child runs the confined Blender (stopping the parent alone stops nothing)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


blender = pid_of("blender")
for p in with_descendants(blender):
    stopped.append(p)
    os.kill(p, signal.SIGSTOP)
try:
    job = PlanJob(base, token, spheres(12, 10))
    state = gateway_client.PromptState(job.prompt)
    wait(job, state, "the plan is accepted (validated, queued)", lambda: bool(state.plan_id) or state.finished, 60)
    deadline = time.monotonic() + 1.0           # its stream is connected and has a position
    wait(job, state, "the plan waits", lambda: time.monotonic() > deadline, 10)
    if state.finished or state.steps:
        fail("the plan did not wait for Blender: %s %s" % (state.state, state.message))
    os.kill(pid_of("gateway"), signal.SIGKILL)
    wait(job, state, "a gap line after the gateway restart",
         lambda: any("gateway restarted" in g for g in state.gaps), 120)
finally:
    for p in stopped:
        os.kill(p, signal.SIGCONT)
    stopped.clear()
wait(job, state, "the plan is followed to its end", lambda: state.finished, 300)
# the executor drops a queued plan whose gateway fell silent (it was told the request was lost),
# or runs it if the new gateway's heartbeats reached it first: either way the client must show how it
# really ended, followed through the new gateway
if state.state == "interrupted":
    if "went silent" not in (state.message or "") or state.done_steps():
        fail("the plan ended interrupted, not as the executor drops a plan whose gateway is gone: %s" % state.message)
elif state.state != "done":
    fail("the plan ended %s: %s" % (state.state, state.message))
elif not state.total or state.done_steps() != state.total:
    fail("steps seen %d of %d" % (state.done_steps(), state.total))
sys.stderr.write("panel_sse_check: ok: %s; gaps %s; note %s\n" % (state.message, state.gaps, state.note))
sys.stderr.flush()
os._exit(0)
