"""state — the whole Blender state to a file and back, exactly (issue 23).

STANDALONE: imports only bpy and the standard library (the sandbox runner imports it from its
own folder).

save(path) writes the main database with Blender's own writer (it writes path@ and renames it
over path), then fsyncs the file and its folder. Blender drops data with no users when it
saves; save() keeps it: each such ID gets a fake user for the save, its (collection, name,
library) is recorded in a sidecar `path + ".json"` (written atomically: temp file, fsync,
rename, fsync of the folder), and the fake user is taken away again, so the live state is as
before. load(path) opens the file (no UI, no scripts from it) and takes the recorded fake
users away, so fingerprint.compute() after load(path) equals it before save(path).

A state folder keeps commits (commit_begin()/commit_finish(), committed(), load_committed()):
each commit is a pair gen-N.blend + gen-N.blend.json. The sidecar is the commit's seal: it is
renamed into place only after the .blend's bytes and its name are on disk (fsync of the file
and of the folder), and it is itself fsynced before its rename and the folder after it. So the
current commit is the highest N whose sidecar exists, and a Blender killed at any moment finds
its last whole commit without trusting anything else. The file CURRENT names it too, as a hint
for people (written after the seal, not fsynced, never trusted). The sidecar also records the
commit's fingerprint digest.

Issue 28 (the cost of a commit): commit_begin() writes the .blend and starts its fsync (and the
folder's) on a helper thread, so the disk's wait overlaps the fingerprint the caller computes
meanwhile (fsync releases the GIL); commit_finish() writes the sealed sidecar and returns only
once the whole commit is durable. Two sync rounds follow the fingerprint instead of six.
"""
import json
import os
import threading
import time

import bpy

SIDECAR_MAX = 64 << 20          # a sidecar larger than this is refused as damaged
CURRENT = "CURRENT"
KEEP = 2                        # commits kept in a state folder (the current one and the one before)
INTERNAL_IMAGE_TYPES = ("RENDER_RESULT", "COMPOSITING")
SKIP_COLLECTIONS = frozenset(("screens", "window_managers", "workspaces"))


class StateError(Exception):
    """A state file or folder that cannot be read or written."""


def s_fsync_dir(folder):
    try:
        fd = os.open(folder or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def s_fsync_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def s_write_fsync(path, data):
    """Write bytes to a new file at path (0600) and fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path, data):
    """Write bytes to path atomically and durably (temp file, fsync, rename, fsync folder)."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = "%s.tmp.%d" % (path, os.getpid())
    s_write_fsync(tmp, data)
    os.replace(tmp, path)
    s_fsync_dir(folder)


def s_id_collections():
    out = []
    for prop in bpy.data.bl_rna.properties:
        if prop.type != "COLLECTION" or prop.identifier in SKIP_COLLECTIONS or prop.fixed_type is None:
            continue
        rna, names = prop.fixed_type, []
        while rna is not None:
            names.append(rna.identifier)
            rna = rna.base
        if "ID" in names:
            out.append(prop.identifier)
    return out


def s_orphans():
    """(collection, ID) of every local ID no one uses and no fake user keeps."""
    out = []
    for ident in s_id_collections():
        if ident in ("libraries", "scenes"):
            continue
        for block in getattr(bpy.data, ident):
            if block.library is not None or block.use_fake_user or block.users != 0:
                continue
            if ident == "images" and block.type in INTERNAL_IMAGE_TYPES:
                continue
            out.append((ident, block))
    return out


def s_write_blend(path):
    """Blender's writer to `path` (it writes path@ and renames it), orphans kept by a fake user
    for the save only. Returns [(collection, ID)] of the orphans (their fake users taken away
    again). Nothing is fsynced here."""
    faked = []
    # Freeing nothing: a fake user on an orphan may make others it uses non-orphans too; one
    # pass over the orphans now is enough, since what they use has users already.
    for ident, block in s_orphans():
        try:
            block.use_fake_user = True
        except (AttributeError, TypeError, RuntimeError):
            continue
        faked.append((ident, block))
    # No preview thumbnail: in a GUI Blender it is drawn with the window's GL context, which a
    # save from a timer leaves wrong for the next redraw (Blender 3.4 crashed on the next UI
    # change); a state file needs no picture. The preference is put back as it was, unmarked.
    prefs = bpy.context.preferences
    fp_prefs = getattr(prefs, "filepaths", None)
    previews = getattr(fp_prefs, "use_save_preview_images", None)
    dirty = prefs.is_dirty
    if previews:
        fp_prefs.use_save_preview_images = False
    try:
        res = bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, compress=False, relative_remap=False,
                                          check_existing=False)
    finally:
        for _ident, block in faked:
            block.use_fake_user = False
        if previews:
            fp_prefs.use_save_preview_images = True
            prefs.is_dirty = dirty
    if "FINISHED" not in res:
        raise StateError("saving %s failed: %s" % (path, res))
    return faked


def s_sidecar(faked, extra):
    side = {"version": 1, "fake_users": [[ident, block.name] for ident, block in faked],
            "saved_at": int(time.time() * 1000)}
    if extra:
        side.update(extra)
    return side


def save(path, extra=None):
    """Write the whole state to `path` (orphans kept, see the module's doc) and its sidecar.
    `extra`: more JSON-able fields for the sidecar. Returns the sidecar's content."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    faked = s_write_blend(path)
    s_fsync_file(path)
    s_fsync_dir(folder)
    side = s_sidecar(faked, extra)
    write_atomic(path + ".json", json.dumps(side, sort_keys=True).encode("utf-8"))
    return side


def read_sidecar(path):
    """The sidecar of a state file, checked (StateError if missing or malformed)."""
    try:
        with open(path + ".json", "rb") as f:
            data = f.read(SIDECAR_MAX + 1)
    except OSError as e:
        raise StateError("cannot read %s.json: %s" % (path, e))
    if len(data) > SIDECAR_MAX:
        raise StateError("%s.json is too large" % path)
    try:
        side = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise StateError("%s.json is not JSON: %s" % (path, e))
    fakes = side.get("fake_users") if isinstance(side, dict) else None
    if not (isinstance(fakes, list) and all(isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f)
                                            for f in fakes)):
        raise StateError("%s.json: fake_users must be a list of [collection, name]" % path)
    return side


def load(path):
    """Open the state file `path` (no UI, no scripts) and take away the fake users its save
    added. Returns the sidecar."""
    path = os.path.abspath(path)
    side = read_sidecar(path)
    if not os.path.isfile(path):
        raise StateError("no state file %s" % path)
    res = bpy.ops.wm.open_mainfile(filepath=path, load_ui=False, use_scripts=False)
    if "FINISHED" not in res:
        raise StateError("loading %s failed: %s" % (path, res))
    known = set(s_id_collections())
    for ident, name in side["fake_users"]:
        if ident not in known:
            continue
        block = getattr(bpy.data, ident).get(name)
        if block is not None and block.library is None:
            block.use_fake_user = False
    return side


# ---------------------------------------------------------------------------- a state folder

def s_generation(name):
    try:
        return int(name[4:-6])
    except ValueError:
        return -1


def s_commits(folder):
    """[(generation, name)] of the folder's sealed commits (a .blend with its sidecar), newest first."""
    try:
        names = set(os.listdir(folder))
    except OSError:
        return []
    out = []
    for n in names:
        if n.startswith("gen-") and n.endswith(".blend") and "/" not in n and n + ".json" in names:
            gen = s_generation(n)
            if gen >= 0:
                out.append((gen, n))
    out.sort(reverse=True)
    return out


def committed(folder):
    """The path of the folder's current commit (the highest sealed generation), or None."""
    for _gen, name in s_commits(folder):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.path.isfile(path + ".json"):
            return path
    return None


class Pending:
    """A commit under way: its .blend written, its fsync running on a helper thread."""

    def __init__(self, folder, gen, path, faked):
        self.folder, self.gen, self.path, self.faked = folder, gen, path, faked
        self.error = None
        self.thread = threading.Thread(target=self.s_sync, name="blendmq-commit-fsync", daemon=True)
        self.thread.start()

    def s_sync(self):
        try:
            s_fsync_file(self.path)
            s_fsync_dir(self.folder)        # the .blend's own rename (path@ -> path) is durable
        except BaseException as e:         # re-raised by commit_finish on the caller's thread
            self.error = e

    def join(self):
        self.thread.join()
        if self.error is not None:
            raise StateError("fsync of %s failed: %s" % (self.path, self.error))


def commit_begin(folder):
    """First half of a commit: write the state as the folder's next generation and start making
    it durable in the background. Returns a Pending for commit_finish (or commit_abort)."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    commits = s_commits(folder)
    gen = commits[0][0] + 1 if commits else 1
    path = os.path.join(folder, "gen-%d.blend" % gen)
    faked = s_write_blend(path)
    return Pending(folder, gen, path, faked)


def commit_finish(pending, extra=None):
    """Seal `pending`: its sidecar (with `extra`) written and fsynced, the .blend's fsync waited
    for, the sidecar renamed into place and the folder fsynced. Durable when this returns.
    Older commits beyond KEEP are removed. Returns (path, sidecar)."""
    side = s_sidecar(pending.faked, dict(extra or {}, generation=pending.gen))
    data = json.dumps(side, sort_keys=True).encode("utf-8")
    side_path = pending.path + ".json"
    tmp = "%s.tmp.%d" % (side_path, os.getpid())
    try:
        s_write_fsync(tmp, data)
        pending.join()                  # the .blend's bytes and name are on disk before the seal
        os.replace(tmp, side_path)
    except BaseException:
        commit_abort(pending)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    s_fsync_dir(pending.folder)         # the seal itself: from here the commit survives a crash
    s_hint_current(pending.folder, os.path.basename(pending.path))
    s_prune(pending.folder, pending.gen)
    return pending.path, side


def commit_abort(pending):
    """A commit that will not be sealed: wait for its fsync and remove its .blend."""
    pending.thread.join()
    try:
        os.unlink(pending.path)
    except OSError:
        pass


def commit(folder, extra=None):
    """Save the state as the folder's next commit (durable when this returns). Returns
    (path, sidecar)."""
    return commit_finish(commit_begin(folder), extra)


def s_hint_current(folder, name):
    """CURRENT names the commit for people; committed() never reads it (not fsynced)."""
    tmp = os.path.join(folder, CURRENT + ".tmp.%d" % os.getpid())
    try:
        with open(tmp, "wb") as f:
            f.write((name + "\n").encode("ascii"))
        os.replace(tmp, os.path.join(folder, CURRENT))
    except OSError:
        pass


def s_prune(folder, gen):
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for n in names:
        base = n[:-5] if n.endswith(".json") else n
        if base.startswith("gen-") and base.endswith(".blend") and 0 <= s_generation(base) <= gen - KEEP:
            try:
                os.unlink(os.path.join(folder, n))
            except OSError:
                pass
        elif ".tmp." in n or n.endswith("@"):       # a save a crash interrupted
            try:
                os.unlink(os.path.join(folder, n))
            except OSError:
                pass


def load_committed(folder):
    """Load the folder's current commit. Returns (path, sidecar), or (None, None) if none."""
    path = committed(folder)
    if path is None:
        return None, None
    return path, load(path)
