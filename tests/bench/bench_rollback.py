"""bench_rollback (issue 23): the cost of exact rollback and durable commits in a real headless
Blender, for scenes of 10, 1,000 and 10,000 objects (each object has its own 8-vertex cube
mesh; every tenth mesh a material of its own).

  blender -b --factory-startup --python bench_rollback.py -- ADDON_DIR [SIZES]

For each size N, through the add-on's own commands (handle_request), in /dev/shm:
  rollback.fingerprint_ms_N   fingerprint.compute() of the whole state (no per-property table)
  rollback.commit_ms_N        a committed plan's commit: fingerprint + state.commit to a state
                              folder (atomic, fsynced): the per-plan cost of durability
  rollback.snapshot_ms_N      plan_begin when the last commit is not current (a fresh snapshot)
  rollback.begin_ms_N         plan_begin right after a commit (the commit's file is the snapshot)
  rollback.restore_ms_N       a failed plan's rollback: load the snapshot + check its fingerprint
  rollback.restore_load_ms_N  the load alone
  rollback.plan_overhead_ms_N a one-step plan that fails, end to end, minus its step's own time
Each value is the median of REPEATS runs. Prints JSON lines like every bench."""
import json
import os
import statistics
import sys
import tempfile
import time

argv = sys.argv[sys.argv.index("--") + 1:]
ADDON_DIR = argv[0]
SIZES = [int(x) for x in argv[1].split(",")] if len(argv) > 1 else [10, 1000, 10000]
sys.dont_write_bytecode = True
sys.path.insert(0, ADDON_DIR)

import bpy                                      # noqa: E402
from blendmq import bounds, durable, fingerprint   # noqa: E402
from blendmq.commands import handle_request     # noqa: E402

PALETTE = os.path.join(ADDON_DIR, "..", "..", "..", "proto", "palette.yaml")
bounds.load_palette_file(os.path.abspath(PALETTE))
base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
durable.configure(tempfile.mkdtemp(prefix="bmq-bench-state-", dir=base))


OUT = os.fdopen(int(os.environ["BENCH_OUT_FD"]), "w") if os.environ.get("BENCH_OUT_FD") else sys.stdout


def emit(metric, value, unit="ms", **extra):
    print(json.dumps(dict({"bench": "rollback", "metric": metric, "value": round(value, 3), "unit": unit}, **extra)),
          file=OUT, flush=True)


def call(cmd, args):
    r = handle_request({"id": 1, "cmd": cmd, "args": args}, time.monotonic())[0]
    if not r.get("ok"):
        raise RuntimeError("%s failed: %s" % (cmd, r.get("error")))
    return r["result"]


def build(n):
    call("reset_scene", {})
    coll = bpy.context.scene.collection
    mats = [bpy.data.materials.new("m%d" % k) for k in range(max(1, n // 10))]
    verts = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
    faces = [(0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    for i in range(n):
        me = bpy.data.meshes.new("me%d" % i)
        me.from_pydata(verts, [], faces)
        if i % 10 == 0:
            me.materials.append(mats[i // 10])
        o = bpy.data.objects.new("o%d" % i, me)
        o.location = (i % 100, i // 100, 0)
        coll.objects.link(o)
    durable.changed()


def median(xs):
    return statistics.median(xs)


REPEATS = int(os.environ.get("BENCH_ROLLBACK_REPEATS", "5"))
FAIL = {"operation": "object.location", "target": "no-such-object", "params": {"value": [0, 0, 0]}}
for n in SIZES:
    build(n)
    reps = REPEATS if n < 10000 else max(2, REPEATS // 2)
    fp_ms = [fingerprint.compute(props=False)["ms"] for _ in range(reps)]
    emit("rollback.fingerprint_ms_%d" % n, median(fp_ms), objects=n)
    fp_full = fingerprint.compute()
    emit("rollback.fingerprint_props_ms_%d" % n, fp_full["ms"], objects=n)
    snap, begin, commit, restore, load, overhead = [], [], [], [], [], []
    for k in range(reps):
        durable.changed()                       # the last commit is not current: a fresh snapshot
        t = time.perf_counter()
        call("plan_begin", {"plan_id": "s%d" % k})
        snap.append((time.perf_counter() - t) * 1000.0)
        call("plan_rollback", {"plan_id": "s%d" % k})
        # a committed plan that moves one object
        r = call("run_plan", {"plan_id": "c%d" % k, "steps": [
            {"operation": "object.location", "target": "o0", "params": {"value": [k, 0, 0]}}]})
        assert r["status"] == "done", r
        commit.append(durable.DURABLE.last["commit_ms"])
        t = time.perf_counter()
        call("plan_begin", {"plan_id": "b%d" % k})
        begin.append((time.perf_counter() - t) * 1000.0)
        call("plan_rollback", {"plan_id": "b%d" % k})
        before = durable.DURABLE.snap_digest
        # a failed plan: delete one object, move another, then fail
        t = time.perf_counter()
        r = call("run_plan", {"plan_id": "f%d" % k, "steps": [
            {"operation": "bpy.ops.object.delete", "target": "o1", "params": {}},
            {"operation": "object.location", "target": "o2", "params": {"value": [9, 9, 9]}}, FAIL]})
        total = (time.perf_counter() - t) * 1000.0
        assert r["status"] == "failed" and r["rollback"]["exact"] and r["fingerprint"] == before, r
        restore.append(durable.DURABLE.last["restore_ms"])
        load.append(durable.DURABLE.last["restore_load_ms"])
        overhead.append(total - r["bpy_ms"])
    emit("rollback.snapshot_ms_%d" % n, median(snap), objects=n)
    emit("rollback.begin_ms_%d" % n, median(begin), objects=n)
    emit("rollback.commit_ms_%d" % n, median(commit), objects=n)
    emit("rollback.restore_ms_%d" % n, median(restore), objects=n)
    emit("rollback.restore_load_ms_%d" % n, median(load), objects=n)
    emit("rollback.plan_overhead_ms_%d" % n, median(overhead), objects=n)
    size = os.path.getsize(durable.DURABLE.snap_path)
    emit("rollback.state_bytes_%d" % n, size, unit="bytes", objects=n)
durable.cleanup()
