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

A state folder keeps commits (commit(), committed(), load_committed()): each commit is a
pair gen-N.blend + gen-N.blend.json, and the file CURRENT names the last whole one (replaced
atomically after both are on disk), so a Blender killed at any moment finds its last commit.
The sidecar also records the commit's fingerprint digest.
"""
import json
import os
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


def write_atomic(path, data):
    """Write bytes to path atomically and durably (temp file, fsync, rename, fsync folder)."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = "%s.tmp.%d" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)
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


def save(path, extra=None):
    """Write the whole state to `path` (orphans kept, see the module's doc) and its sidecar.
    `extra`: more JSON-able fields for the sidecar. Returns the sidecar's content."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
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
    s_fsync_file(path)
    s_fsync_dir(folder)
    side = {"version": 1, "fake_users": [[ident, block.name] for ident, block in faked],
            "saved_at": int(time.time() * 1000)}
    if extra:
        side.update(extra)
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

def committed(folder):
    """The path of the folder's current commit, or None when it holds none."""
    try:
        with open(os.path.join(folder, CURRENT), "rb") as f:
            name = f.read(256).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not name.startswith("gen-") or not name.endswith(".blend") or "/" in name:
        return None
    path = os.path.join(folder, name)
    return path if os.path.isfile(path) and os.path.isfile(path + ".json") else None


def s_generation(name):
    try:
        return int(name[4:-6])
    except ValueError:
        return -1


def commit(folder, extra=None):
    """Save the state as the folder's next commit and make it current (durable when this
    returns). Older commits beyond KEEP are removed. Returns (path, sidecar)."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    current = committed(folder)
    gen = s_generation(os.path.basename(current)) + 1 if current else 1
    name = "gen-%d.blend" % gen
    path = os.path.join(folder, name)
    side = save(path, dict(extra or {}, generation=gen))
    write_atomic(os.path.join(folder, CURRENT), (name + "\n").encode("ascii"))
    s_prune(folder, gen)
    return path, side


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
