"""durable — the scene's last known good state: the snapshot a rollback restores, and durable
commits (issue 23).

Exact rollback: a plan (or a script) starts from a snapshot file of the whole state
(state.save: orphans kept) and a failure loads it back (state.load), then checks that the
fingerprint is the one from before. Headless, the scene changes only through commands, so the
file of the last commit IS the snapshot while no other command changed anything since
(`generation`, moved by every command that is not read-only); otherwise plan_begin saves one to
a private temp folder first. A GUI Blender is changed by hand at any time: there every
plan_begin saves a fresh snapshot.

Durable commits: with --state-dir DIR every commit (a plan or script that ends well, a step
outside a plan, reset_scene) is saved there (state.commit_begin/commit_finish: gen-N.blend,
then its sealing sidecar) before its reply is sent, and the add-on loads DIR's current commit when it starts:
a Blender killed with kill -9 comes back with its last commit's fingerprint. Without a state
folder commits are saved to the private temp folder only (rollback still exact, not durable).

Caveats: loading a file resets Blender's undo history and makes bpy.data.filepath the
snapshot's path (in a GUI Blender "Save" then writes the snapshot; use Save As)."""
import os
import shutil
import tempfile
import time

import bpy

from . import fingerprint, state
from .log import log


class DURABLE:
    state_dir = None        # --state-dir (None: commits are not durable)
    tmp_dir = None          # private folder for snapshots (made on first use)
    snap_path = None        # the file holding the last known state
    snap_digest = None      # its fingerprint digest
    snap_gen = -1           # `generation` when it was taken
    generation = 0          # moved by every command that may change the scene
    snap_shape = None       # cheap outline of that state (s_shape): a change made behind the commands' back
    last = {}               # timings of the last snapshot, commit and restore (ms), for bench and status


def changed():
    """A command that may change the scene is about to run."""
    DURABLE.generation += 1


def configure(state_dir):
    DURABLE.state_dir = os.path.abspath(state_dir) if state_dir else None


def s_tmp_dir():
    if DURABLE.tmp_dir is None or not os.path.isdir(DURABLE.tmp_dir):
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        DURABLE.tmp_dir = tempfile.mkdtemp(prefix="blendmq-snap-", dir=base)
    return DURABLE.tmp_dir


def cleanup():
    if DURABLE.tmp_dir is not None:
        shutil.rmtree(DURABLE.tmp_dir, ignore_errors=True)
        DURABLE.tmp_dir = None


def s_shape():
    """The object names and the size of every ID collection: cheap (about 1 ms for 10,000
    objects), and it catches most changes made without a command (a test's or a console's)."""
    counts = tuple(len(getattr(bpy.data, ident)) for ident in state.s_id_collections())
    return counts, frozenset(bpy.data.objects.keys())


def s_set(path, digest):
    DURABLE.snap_path, DURABLE.snap_digest, DURABLE.snap_gen = path, digest, DURABLE.generation
    DURABLE.snap_shape = s_shape()


def current():
    """True when the snapshot file holds the state as it is now (headless only)."""
    return bpy.app.background and DURABLE.snap_path is not None and DURABLE.snap_gen == DURABLE.generation \
        and os.path.isfile(DURABLE.snap_path) and DURABLE.snap_shape == s_shape()


def ensure_snapshot():
    """Make sure a snapshot of the state as it is now exists. Returns (path, digest)."""
    if current():
        DURABLE.last["snapshot_ms"] = 0.0
        return DURABLE.snap_path, DURABLE.snap_digest
    t0 = time.perf_counter()
    fp = fingerprint.compute(props=False)
    t1 = time.perf_counter()
    path = os.path.join(s_tmp_dir(), "snapshot.blend")
    state.save(path, {"fingerprint": fp["digest"]})
    t2 = time.perf_counter()
    s_set(path, fp["digest"])
    DURABLE.last.update(snapshot_ms=(t2 - t0) * 1000.0, snapshot_fp_ms=(t1 - t0) * 1000.0,
                        snapshot_save_ms=(t2 - t1) * 1000.0)
    return path, fp["digest"]


def commit(reason):
    """The scene as it is now is committed: saved to the state folder (durably) or the private
    temp folder, and made the snapshot. Returns its fingerprint digest.

    With a state folder the .blend is written first and its fsync runs while the fingerprint is
    computed (state.commit_begin); the sidecar that seals the commit carries that fingerprint
    and is on disk before this returns (state.commit_finish). The fingerprint is of the state
    just written: nothing runs between the write and the walk (the save's fake users are taken
    away again before it returns)."""
    from .scene import s_ensure_object_mode
    s_ensure_object_mode()      # an edit mesh is written back before it is saved (issue 27)
    t0 = time.perf_counter()
    if DURABLE.state_dir:
        pending = state.commit_begin(DURABLE.state_dir)
        t1 = time.perf_counter()
        try:
            fp = fingerprint.compute(props=False)
        except BaseException:
            state.commit_abort(pending)
            raise
        t2 = time.perf_counter()
        path, _side = state.commit_finish(pending, {"fingerprint": fp["digest"], "reason": str(reason)[:200]})
        t3 = time.perf_counter()
        fp_ms, save_ms = (t2 - t1) * 1000.0, ((t1 - t0) + (t3 - t2)) * 1000.0
        DURABLE.last.update(commit_write_ms=(t1 - t0) * 1000.0, commit_seal_ms=(t3 - t2) * 1000.0)
    else:
        fp = fingerprint.compute(props=False)
        t1 = time.perf_counter()
        path = os.path.join(s_tmp_dir(), "commit.blend")
        state.save(path, {"fingerprint": fp["digest"], "reason": str(reason)[:200]})
        t3 = time.perf_counter()
        fp_ms, save_ms = (t1 - t0) * 1000.0, (t3 - t1) * 1000.0
    s_set(path, fp["digest"])
    DURABLE.last.update(commit_ms=(t3 - t0) * 1000.0, commit_fp_ms=fp_ms, commit_save_ms=save_ms)
    return fp["digest"]


def restore(path, digest):
    """Load the snapshot `path` and check its fingerprint against `digest` (the state before).
    Returns {"fingerprint", "exact", "ms"}; raises what the load raised."""
    t0 = time.perf_counter()
    state.load(path)
    t1 = time.perf_counter()
    fp = fingerprint.compute(props=False)
    t2 = time.perf_counter()
    exact = fp["digest"] == digest
    if exact:
        s_set(path, digest)
    else:
        log("rollback restored %s but its fingerprint %s is not the one before (%s)"
            % (path, fp["digest"][:16], str(digest)[:16]))
    DURABLE.last.update(restore_ms=(t2 - t0) * 1000.0, restore_load_ms=(t1 - t0) * 1000.0,
                        restore_fp_ms=(t2 - t1) * 1000.0)
    return {"fingerprint": fp["digest"], "exact": exact, "ms": (t2 - t0) * 1000.0}


def load_at_start():
    """At add-on start: load the state folder's current commit, if it holds one. Returns its
    sidecar (with the committed fingerprint) or None."""
    if not DURABLE.state_dir:
        return None
    try:
        path, side = state.load_committed(DURABLE.state_dir)
    except state.StateError as e:
        log("cannot load the committed scene from %s: %s" % (DURABLE.state_dir, e))
        return None
    if path is None:
        return None
    digest = fingerprint.compute(props=False)["digest"]
    if side.get("fingerprint") not in (None, digest):
        log("the committed scene %s loaded with fingerprint %s, committed as %s"
            % (path, digest[:16], str(side.get("fingerprint"))[:16]))
    s_set(path, digest)
    log("loaded the committed scene %s (generation %s, fingerprint %s)" % (path, side.get("generation"), digest[:16]))
    return side
