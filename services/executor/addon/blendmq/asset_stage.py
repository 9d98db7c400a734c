"""asset_stage — an asset's files reach Blender as blobs on the link, and are kept (issue 16).

asset_stage (the link command, declared in proto/blender_link.json): the executor downloads an
asset's files and sends them BEFORE the plan that imports them: args {key: {source, id, type,
resolution?, format}, main, files: [{path, size, sha256, map?}]}, the request's blob the files'
bytes concatenated in that order. Everything is checked before anything is kept: the key's
fields (the sources, types, resolutions and formats of plan_assets.h), every path relative and
plain (no '..', '.', empty components, backslash, NUL, control characters, leading '/'; no
path both a file and a folder of another), the sizes adding up to the blob, each piece's
sha256, main one of the files with its format's extension. The bundle is kept IN MEMORY under
its key: at most BUNDLES_MAX bundles and BYTES_MAX bytes together, the least recently used
dropped first (staging a key again replaces it; an import does not consume it: a plan may
import the same asset twice). Nothing touches bpy or the file system here.

An asset larger than one link frame comes in chunks: args also carry offset (the bytes already
sent) and total (the whole blob). offset 0 starts the bundle (everything above is checked then,
the sizes against total, total at most BYTES_MAX); each next chunk must continue exactly where
the last stopped, for the same key, main and files; the bundle is checked (every sha256) and
kept when the last byte arrives. Until then the reply says staged false and how many bytes
arrived. Only one bundle is assembled at a time: a new offset 0 drops an unfinished one. Without
offset and total the request's blob is the whole bundle (one frame)."""
import hashlib
import os
import re
from collections import OrderedDict

from .args import CommandError

# The sources, resolutions, formats (in the order a step without one takes them), extensions and
# texture map names are declared once, in proto/assets.json, with the executor's (asset_proto.py
# is generated from it: SOURCE_FORMAT is a source with one format, its default whatever the
# type; RESOLUTION_SOURCES the only ones whose keys carry a resolution).
from .asset_proto import (DEFAULT_FORMAT, EXTENSIONS, FORMATS, MAP_NAMES, RESOLUTION_SOURCES,  # noqa: F401
                          RESOLUTIONS, SOURCE_FORMAT, SOURCES)
ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
SHA_RE = re.compile(r"[0-9a-fA-F]{64}")
MAP_RE = re.compile(r"[A-Za-z0-9_]{1,32}")
KEY_FIELDS = ("source", "id", "type", "resolution", "format")
FILE_FIELDS = ("path", "size", "sha256", "map")
FILES_MAX = 256
PATH_MAX_BYTES = 1024       # a whole relative path
PART_MAX_BYTES = 255        # one component (a file system's own limit)
DEPTH_MAX = 16
BUNDLES_MAX = 8
BYTES_MAX = 1 << 30

# ---------------------------------------------------------------------------- the staged bundles


class s_Bundle:
    def __init__(self, key, main, files, blob):
        self.key, self.main, self.blob = key, main, blob
        self.files = files          # [(path, offset, size, map or None)], in the blob's order

    def write(self, root):
        """Write every file under the directory `root` (made by mkdtemp); the paths were
        checked at staging, and each is checked again to land inside root."""
        real_root = os.path.realpath(root)
        for path, offset, size, _map in self.files:
            full = os.path.realpath(os.path.join(real_root, *path.split("/")))
            if os.path.commonpath([full, real_root]) != real_root or full == real_root:
                raise CommandError("asset.import: %s would land outside its directory" % path[:120])
            os.makedirs(os.path.dirname(full), mode=0o700, exist_ok=True)
            fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(memoryview(self.blob)[offset:offset + size])
        return os.path.join(real_root, *self.main.split("/"))

    def maps(self, root):
        """{map name (lower case): file path under root} for the files that name a map."""
        return {m: os.path.join(root, *p.split("/")) for p, _o, _s, m in self.files if m}


class STAGED:
    """The bundles, least recently used first."""
    bundles = OrderedDict()         # key tuple -> s_Bundle

    @classmethod
    def size(cls):
        return sum(len(b.blob) for b in cls.bundles.values())

    @classmethod
    def put(cls, bundle):
        cls.bundles.pop(bundle.key, None)
        while cls.bundles and (len(cls.bundles) >= BUNDLES_MAX or cls.size() + len(bundle.blob) > BYTES_MAX):
            cls.bundles.popitem(last=False)
        cls.bundles[bundle.key] = bundle

    @classmethod
    def get(cls, key):
        bundle = cls.bundles.get(key)
        if bundle is not None:
            cls.bundles.move_to_end(key)
        return bundle

    @classmethod
    def get_any_format(cls, key):
        """The most recently staged bundle of (source, id, type, resolution) in any format: a step
        that names no format imports what the executor fetched (Sketchfab: glb when offered)."""
        for k in reversed(cls.bundles):
            if k[:4] == key[:4]:
                return cls.get(k)
        return None

    @classmethod
    def clear(cls):
        cls.bundles.clear()


def key_text(key):
    source, asset_id, kind, resolution, fmt = key
    return "%s %s %s (%s%s)" % (source, kind, asset_id, resolution + ", " if resolution else "", fmt)


def s_key(d, where, format_default):
    """The key tuple (source, id, type, resolution or None, format) of a dict checked field by
    field; format_default: take the type's default format when none is given (a step)."""
    if not isinstance(d, dict):
        raise CommandError("%s: key must be an object" % where)
    extra = sorted(str(k)[:40] for k in d if k not in KEY_FIELDS)
    if extra:
        raise CommandError("%s: unknown key field %s (fields: %s)" % (where, extra[0], ", ".join(KEY_FIELDS)))
    source, asset_id, kind = d.get("source"), d.get("id"), d.get("type")
    resolution, fmt = d.get("resolution"), d.get("format")
    if source not in SOURCES:
        raise CommandError("%s: source must be one of %s" % (where, ", ".join(SOURCES)))
    if not (isinstance(asset_id, str) and ID_RE.fullmatch(asset_id)):
        raise CommandError("%s: id must be 1 to 64 of A-Z, a-z, 0-9, _ and -" % where)
    if kind not in FORMATS:
        raise CommandError("%s: type must be one of %s" % (where, ", ".join(FORMATS)))
    if resolution is not None and resolution not in RESOLUTIONS:
        raise CommandError("%s: resolution must be one of %s (or none)" % (where, ", ".join(RESOLUTIONS)))
    if source not in RESOLUTION_SOURCES:
        resolution = None               # a step's default 1k means nothing to Sketchfab or Hyper3D
    if fmt is None and format_default:
        fmt = SOURCE_FORMAT.get(source, DEFAULT_FORMAT[kind])
    if fmt not in FORMATS[kind]:
        raise CommandError("%s: a %s comes as %s, not %s" % (where, kind, ", ".join(FORMATS[kind]), str(fmt)[:20]))
    return source, asset_id, kind, resolution, fmt


def s_path(path, where):
    """A relative, plain path (what a file's path or main must be)."""
    if not isinstance(path, str) or not path:
        raise CommandError("%s: a path must be a non-empty string" % where)
    shown = path[:120].encode("unicode_escape").decode("ascii")
    if len(path.encode("utf-8", "surrogatepass")) > PATH_MAX_BYTES:
        raise CommandError("%s: path %s is longer than %d bytes" % (where, shown, PATH_MAX_BYTES))
    if "\x00" in path or "\\" in path or any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise CommandError("%s: path %s holds a NUL, a backslash or a control character" % (where, shown))
    if path.startswith("/"):
        raise CommandError("%s: path %s is absolute: paths must be relative" % (where, shown))
    parts = path.split("/")
    if len(parts) > DEPTH_MAX:
        raise CommandError("%s: path %s is deeper than %d folders" % (where, shown, DEPTH_MAX))
    for part in parts:
        if part in ("", ".", ".."):
            raise CommandError("%s: path %s has an empty, '.' or '..' component" % (where, shown))
        if len(part.encode("utf-8", "surrogatepass")) > PART_MAX_BYTES:
            raise CommandError("%s: a component of path %s is longer than %d bytes" % (where, shown, PART_MAX_BYTES))
    return path


def s_files(files, where):
    """[(path, size, sha256 lower case, map or None)] from the request's files, checked."""
    if not isinstance(files, list) or not 0 < len(files) <= FILES_MAX:
        raise CommandError("%s: files must be a list of 1 to %d files" % (where, FILES_MAX))
    out, seen = [], set()
    for i, f in enumerate(files):
        at = "%s: files[%d]" % (where, i)
        if not isinstance(f, dict):
            raise CommandError("%s must be an object {path, size, sha256, map?}" % at)
        extra = sorted(str(k)[:40] for k in f if k not in FILE_FIELDS)
        if extra:
            raise CommandError("%s: unknown field %s (fields: %s)" % (at, extra[0], ", ".join(FILE_FIELDS)))
        path = s_path(f.get("path"), at)
        size, sha, kind = f.get("size"), f.get("sha256"), f.get("map")
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= BYTES_MAX:
            raise CommandError("%s: size must be an integer in 0..%d" % (at, BYTES_MAX))
        if not isinstance(sha, str) or not SHA_RE.fullmatch(sha):
            raise CommandError("%s: sha256 must be 64 hex digits" % at)
        if kind is not None and not (isinstance(kind, str) and MAP_RE.fullmatch(kind)):
            raise CommandError("%s: map must be 1 to 32 of A-Z, a-z, 0-9 and _" % at)
        if kind is not None and kind.lower() not in MAP_NAMES:      # a name only one side knows is lost
            raise CommandError("%s: map %s is not one of %s (proto/assets.json)" % (at, kind[:32], ", ".join(
                sorted(MAP_NAMES))))
        if path in seen:
            raise CommandError("%s: path %s is given twice" % (at, path[:120]))
        seen.add(path)
        out.append((path, size, sha.lower(), kind.lower() if kind else None))
    for path in seen:                   # "a" and "a/b" cannot both be files
        parts = path.split("/")
        for n in range(1, len(parts)):
            if "/".join(parts[:n]) in seen:
                raise CommandError("%s: %s is both a file and the folder of %s" % (where, "/".join(parts[:n])[:120],
                                                                                  path[:120]))
    return out


class PENDING:
    """The bundle being assembled from chunks, or None: (key, main, files, total, bytearray)."""
    current = None


def s_int(v, where, name, hi):
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= hi:
        raise CommandError("%s: %s must be an integer in 0..%d" % (where, name, hi))
    return v


def s_keep(key, main, files, data, where):
    """Check every file's sha256 in data (the whole blob) and keep the bundle."""
    view, offset, entries = memoryview(data), 0, []
    for path, size, sha, kind in files:
        got = hashlib.sha256(view[offset:offset + size]).hexdigest()
        if got != sha:
            raise CommandError("%s: %s does not match its sha256 (the bytes hash to %s, not %s)"
                               % (where, path[:120], got, sha))
        entries.append((path, offset, size, kind))
        offset += size
    STAGED.put(s_Bundle(key, main, entries, data))
    return {"staged": True, "files": len(entries), "bytes": len(data)}


def cmd_asset_stage(args, blob):
    """asset_stage {key, main, files, offset?, total?} + blob: check the bundle (or its chunk) and
    keep it (see above)."""
    where = "asset_stage"
    key = s_key(args.get("key"), where, format_default=False)
    files = s_files(args.get("files"), where)
    main = s_path(args.get("main"), where + ": main")
    blob = bytes(blob or b"")
    sizes = sum(size for _p, size, _s, _m in files)
    chunked = args.get("offset") is not None or args.get("total") is not None
    total = s_int(args.get("total"), where, "total", BYTES_MAX) if chunked else len(blob)
    offset = s_int(args.get("offset"), where, "offset", BYTES_MAX) if chunked else 0
    if sizes != total:
        raise CommandError("%s: the files' sizes add up to %d bytes but the %s holds %d"
                           % (where, sizes, "bundle" if chunked else "blob", total))
    if main not in {p for p, _s, _h, _m in files}:
        raise CommandError("%s: main %s is not one of the files" % (where, main[:120]))
    if not main.lower().endswith(EXTENSIONS[key[4]]):
        raise CommandError("%s: main %s is not a %s file (%s)" % (where, main[:120], key[4], ", ".join(EXTENSIONS[key[4]])))
    if not chunked:
        return s_keep(key, main, files, blob, where), None
    if offset == 0:
        PENDING.current = None          # a new bundle drops an unfinished one
        data = bytearray()
    else:
        held = PENDING.current
        if held is None or held[:4] != (key, main, files, total):
            raise CommandError("%s: a chunk at offset %d of %s, but no such bundle is being staged (send offset 0 "
                               "first)" % (where, offset, key_text(key)))
        data = held[4]
        if offset != len(data):
            PENDING.current = None
            raise CommandError("%s: a chunk at offset %d of %s, but %d bytes arrived so far: the bundle is dropped"
                               % (where, offset, key_text(key), len(data)))
    if offset + len(blob) > total:
        PENDING.current = None
        raise CommandError("%s: a chunk of %d bytes at offset %d runs past the bundle's %d bytes"
                           % (where, len(blob), offset, total))
    data += blob
    if len(data) < total:
        PENDING.current = (key, main, files, total, data)
        return {"staged": False, "files": len(files), "bytes": len(data)}, None
    PENDING.current = None
    return s_keep(key, main, files, data, where), None      # the bytearray itself: no second copy


cmd_asset_stage.takes_blob = True       # commands.handle_request hands it the request's blob

