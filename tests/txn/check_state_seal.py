"""The state folder's seal (issue 28): a commit is the highest gen-N.blend whose sidecar is in
place, and the sidecar is renamed in only after the .blend's bytes and name are on disk.

  blender -b --factory-startup --python check_state_seal.py -- ADDON_DIR

In this headless Blender, against a private state folder:
  * a commit whose .blend was written but never sealed (the process "dies" between
    commit_begin and commit_finish) is not the current one; a CURRENT that names it is not
    trusted; loading gives the last sealed commit's fingerprint;
  * the next commit reuses that generation and is sealed, with the scene's fingerprint;
  * a failed fsync (injected) seals nothing and answers the error; the commit before stays;
  * durable.commit's reported fingerprint is the scene's (computed while the .blend's fsync
    runs) and the sidecar records it;
  * a fingerprint that raises inside durable.commit removes the unsealed .blend;
  * the fingerprint's per-type plans, kept across computes in a headless Blender, give the
    digest a fresh walk gives after a property is registered, re-registered or removed.
Exit 0 when every expectation holds, 1 otherwise (each failure printed)."""
import json
import os
import shutil
import sys
import tempfile

argv = sys.argv[sys.argv.index("--") + 1:]
sys.dont_write_bytecode = True
sys.path.insert(0, argv[0])

import bpy                                          # noqa: E402
from blendmq import durable, fingerprint, state     # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def digest():
    return fingerprint.compute(props=False)["digest"]


folder = tempfile.mkdtemp(prefix="bmq-seal-")
bpy.ops.mesh.primitive_cube_add(location=(1, 2, 3))
path1, side1 = state.commit(folder, {"fingerprint": digest()})
fp1 = digest()
expect(state.committed(folder) == path1 and path1.endswith("gen-1.blend"), "the first commit is gen-1: %s" % path1)
expect(side1.get("fingerprint") == fp1, "its sidecar records the fingerprint")

# a commit that never gets its seal (killed between the write and the sidecar)
bpy.ops.mesh.primitive_uv_sphere_add(location=(4, 0, 0))
fp2 = digest()
pending = state.commit_begin(folder)
pending.thread.join()
expect(os.path.isfile(pending.path) and not os.path.exists(pending.path + ".json"),
       "an unsealed commit leaves a .blend without a sidecar")
with open(os.path.join(folder, "CURRENT"), "w") as f:
    f.write(os.path.basename(pending.path) + "\n")
expect(state.committed(folder) == path1, "the unsealed commit is not current, whatever CURRENT says: %s"
       % state.committed(folder))
state.load_committed(folder)
expect(digest() == fp1, "loading the folder gives the last sealed commit's fingerprint")
expect("Sphere" not in bpy.data.objects, "the unsealed commit's sphere is not in the loaded scene")

# the next commit takes that generation and seals it
bpy.ops.mesh.primitive_uv_sphere_add(location=(4, 0, 0))
durable.configure(folder)
reported = durable.commit("seal test")
expect(reported == digest(), "durable.commit reports the scene's fingerprint")
cur = state.committed(folder)
expect(cur is not None and cur.endswith("gen-2.blend"), "the next commit reuses gen-2 and is current: %s" % cur)
with open(cur + ".json") as f:
    expect(json.load(f).get("fingerprint") == reported, "the seal records the reported fingerprint")
expect(open(os.path.join(folder, "CURRENT")).read().strip() == "gen-2.blend", "CURRENT names it (a hint)")
for k in ("commit_ms", "commit_fp_ms", "commit_save_ms", "commit_write_ms", "commit_seal_ms"):
    expect(isinstance(durable.DURABLE.last.get(k), float), "durable.last has %s" % k)

# an fsync that fails seals nothing
real_fsync = state.s_fsync_file


def failing_fsync(p):
    raise OSError(5, "injected EIO")


state.s_fsync_file = failing_fsync
bpy.ops.object.empty_add()
try:
    durable.commit("failing fsync")
    expect(False, "a failed fsync raises")
except state.StateError as e:
    expect("injected EIO" in str(e), "a failed fsync raises StateError: %s" % e)
finally:
    state.s_fsync_file = real_fsync
expect(state.committed(folder) == cur, "after a failed fsync the commit before stays current")
expect(not os.path.exists(os.path.join(folder, "gen-3.blend")), "and the unsealed .blend was removed")

# a fingerprint that raises inside the commit
real_compute = fingerprint.compute


def failing_compute(*a, **k):
    raise RuntimeError("injected")


fingerprint.compute = failing_compute
try:
    durable.commit("failing fingerprint")
    expect(False, "a failing fingerprint raises")
except RuntimeError:
    expect(True, "a failing fingerprint raises out of durable.commit")
finally:
    fingerprint.compute = real_compute
expect(state.committed(folder) == cur and not os.path.exists(os.path.join(folder, "gen-3.blend")),
       "and leaves no unsealed .blend behind")

# the fingerprint's plans kept across computes (headless) follow a property registered or
# removed after them: the digest is always what a walk with no kept plans gives
def fresh_digest():
    kept = dict(fingerprint.PLANS)
    fingerprint.PLANS.clear()
    try:
        return digest()
    finally:
        fingerprint.PLANS.update(kept)


d0 = digest()
expect(fingerprint.PLANS and d0 == fresh_digest(), "kept plans give the digest of a fresh walk")
bpy.types.Object.bmq_seal_test = bpy.props.IntProperty(default=3)
bpy.data.objects[0].bmq_seal_test = 5
d1 = digest()
expect(d1 != d0 and d1 == fresh_digest(), "a property registered after the plans were kept is walked")
bpy.types.Object.bmq_seal_test = bpy.props.FloatProperty(default=3.0)
d2 = digest()
expect(d2 == fresh_digest(), "a property registered again with another type is walked as a fresh walk does")
del bpy.types.Object.bmq_seal_test
expect(digest() == fresh_digest(), "a property removed is no longer read")

shutil.rmtree(folder, ignore_errors=True)
print("%d failure(s)" % len(FAILURES), flush=True)
sys.exit(1 if FAILURES else 0)
