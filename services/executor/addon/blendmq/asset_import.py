"""asset_import — assets reach Blender as blobs on the link and become scene content (issue 16).

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

asset.import (the builtin step, steps.py BUILTINS): params {source, id, type, resolution?,
format?} (format defaults per type: model gltf (hyper3d glb), hdri hdr, texture jpg) find the
staged bundle; nothing staged under that key is a clear error. The files are written into a
private directory (tempfile.mkdtemp: 0700, this process's user; files O_EXCL|O_NOFOLLOW, 0600)
that is removed when the import ends, whatever happened, so every image the import made is
packed into the .blend first. Importers are called directly (not through a plan's bpy.ops
step: steps.py denies the wm category, and obj_import lives there).
  model:   glTF/GLB (import_scene.gltf), FBX (import_scene.fbx), OBJ (wm.obj_import); every
           top-level imported object is parented under one new empty named after the asset id
           (steps.py then names it after the step's name): the step's object. No target.
  texture: a Principled BSDF material from the files' maps (diffuse/albedo -> Base Color, ao
           multiplied into it, nor_gl -> Normal Map -> Normal, rough -> Roughness, metal ->
           Metallic; data maps Non-Color), assigned to the target (required).
  hdri:    a new world, Environment Texture -> Background, made the scene's world. No target.
A failed import removes what it had added before the error is raised (a local s_Transaction);
inside a plan, the plan's own transaction removes a successful import's work on rollback."""
import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from collections import OrderedDict

from .args import CommandError
from .protocol import MAX_BLOB

SOURCES = ("polyhaven", "sketchfab", "hyper3d")
RESOLUTIONS = ("1k", "2k", "4k", "8k")
FORMATS = {"model": ("gltf", "glb", "fbx", "obj"), "hdri": ("hdr", "exr"), "texture": ("jpg", "png")}
DEFAULT_FORMAT = {"model": "gltf", "hdri": "hdr", "texture": "jpg"}
SOURCE_FORMAT = {"hyper3d": "glb"}      # a source with one format: its default whatever the type
EXTENSIONS = {"gltf": (".gltf",), "glb": (".glb",), "fbx": (".fbx",), "obj": (".obj",),
              "hdr": (".hdr",), "exr": (".exr",), "jpg": (".jpg", ".jpeg"), "png": (".png",)}
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
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_BLOB:
            raise CommandError("%s: size must be an integer in 0..%d" % (at, MAX_BLOB))
        if not isinstance(sha, str) or not SHA_RE.fullmatch(sha):
            raise CommandError("%s: sha256 must be 64 hex digits" % at)
        if kind is not None and not (isinstance(kind, str) and MAP_RE.fullmatch(kind)):
            raise CommandError("%s: map must be 1 to 32 of A-Z, a-z, 0-9 and _" % at)
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


def cmd_asset_stage(args, blob):
    """asset_stage {key, main, files} + blob: check the bundle and keep it (see above)."""
    where = "asset_stage"
    key = s_key(args.get("key"), where, format_default=False)
    files = s_files(args.get("files"), where)
    main = s_path(args.get("main"), where + ": main")
    blob = bytes(blob or b"")
    total = sum(size for _p, size, _s, _m in files)
    if total != len(blob):
        raise CommandError("%s: the files' sizes add up to %d bytes but the blob holds %d" % (where, total, len(blob)))
    if main not in {p for p, _s, _h, _m in files}:
        raise CommandError("%s: main %s is not one of the files" % (where, main[:120]))
    if not main.lower().endswith(EXTENSIONS[key[4]]):
        raise CommandError("%s: main %s is not a %s file (%s)" % (where, main[:120], key[4], ", ".join(EXTENSIONS[key[4]])))
    view, offset, entries = memoryview(blob), 0, []
    for path, size, sha, kind in files:
        got = hashlib.sha256(view[offset:offset + size]).hexdigest()
        if got != sha:
            raise CommandError("%s: %s does not match its sha256 (the bytes hash to %s, not %s)"
                               % (where, path[:120], got, sha))
        entries.append((path, offset, size, kind))
        offset += size
    STAGED.put(s_Bundle(key, main, entries, blob))
    return {"staged": True, "files": len(entries), "bytes": len(blob)}, None


cmd_asset_stage.takes_blob = True       # commands.handle_request hands it the request's blob

# ---------------------------------------------------------------------------- the import step


@contextlib.contextmanager
def s_private_dir():
    """A directory only this user can enter, removed with everything in it at the end."""
    path = tempfile.mkdtemp(prefix="blendmq-asset-")
    try:
        os.chmod(path, 0o700)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def s_numpy_compat():
    """Blender 3.4's glTF importer still says numpy.bool, which numpy 1.24 removed: give it back
    (the builtin bool, what it was an alias of) for the import only."""
    try:
        import numpy
    except ImportError:             # the glTF importer will say numpy is missing
        yield
        return
    added = "bool" not in vars(numpy)
    if added:
        numpy.bool = bool
    try:
        yield
    finally:
        if added:
            vars(numpy).pop("bool", None)


def s_operator(fn, where, **kwargs):
    """Run an importer; its own reports make the error when it fails."""
    from .capture import CAPTURE
    try:
        with CAPTURE:
            result = fn(**kwargs)
    except RuntimeError as e:
        raise CommandError("%s: %s" % (where, str(e).strip()[:1000]))
    if result != {"FINISHED"}:
        reports = CAPTURE.text[-1000:]
        raise CommandError("%s: the importer returned %s%s" % (where, "/".join(sorted(result)),
                                                                ": " + reports if reports else ""))


def s_load_image(path, where, non_color=False):
    """An image read from `path` and packed into the .blend (its file is about to go)."""
    import bpy
    try:
        img = bpy.data.images.load(path, check_existing=False)
    except RuntimeError as e:
        raise CommandError("%s: %s is not an image Blender can read (%s)" % (where, os.path.basename(path)[:120],
                                                                            str(e).strip()[:200]))
    if tuple(img.size) == (0, 0):          # reading the size loads the file
        bpy.data.images.remove(img)
        raise CommandError("%s: %s is not an image Blender can read" % (where, os.path.basename(path)[:120]))
    img.pack()
    if non_color:
        img.colorspace_settings.name = "Non-Color"
    return img


def s_pack_new_images(before):
    """Pack every image an importer read from the private directory."""
    import bpy
    for img in bpy.data.images:
        if img.name not in before and img.source == "FILE" and img.packed_file is None and img.filepath:
            try:
                img.pack()
            except RuntimeError:     # a texture the bundle did not hold: it stays missing
                pass


def s_import_model(bundle, main, label, where):
    import bpy
    fmt = bundle.key[4]
    before, images = set(bpy.data.objects.keys()), set(bpy.data.images.keys())
    if fmt in ("gltf", "glb"):
        with s_numpy_compat():
            s_operator(bpy.ops.import_scene.gltf, where, filepath=main)
    elif fmt == "fbx":
        s_operator(bpy.ops.import_scene.fbx, where, filepath=main)
    else:
        op = bpy.ops.wm.obj_import if hasattr(bpy.ops.wm, "obj_import") else bpy.ops.import_scene.obj
        s_operator(op, where, filepath=main)
    s_pack_new_images(images)
    made = [o for o in bpy.data.objects if o.name not in before]
    if not made:
        raise CommandError("%s: %s holds no objects" % (where, os.path.basename(main)[:120]))
    root = bpy.data.objects.new(label, None)
    root.empty_display_type = "PLAIN_AXES"
    bpy.context.view_layer.active_layer_collection.collection.objects.link(root)
    for o in made:
        if o.parent is None:
            o.parent = root         # the root sits at the origin: world transforms stay
            o.matrix_parent_inverse.identity()
    vl = bpy.context.view_layer
    for o in list(vl.objects.selected):
        o.select_set(False)
    root.select_set(True)
    vl.objects.active = root
    return root


def s_node(tree, kind, x, y):
    node = tree.nodes.new(kind)
    node.location = (x, y)
    return node


def s_import_texture(bundle, root, obj, label, where):
    import bpy
    if obj is None:
        raise CommandError("%s: a texture builds a material on its target: give the object's name as target" % where)
    if not hasattr(obj.data, "materials"):
        raise CommandError("%s: object %s (%s) cannot hold materials" % (where, obj.name, obj.type))
    maps = bundle.maps(root)
    main = os.path.join(root, *bundle.main.split("/"))
    color = maps.get("diffuse") or maps.get("albedo") or maps.get("basecolor") or maps.get("color") or main
    mat = bpy.data.materials.new(label)
    mat.use_nodes = True
    tree = mat.node_tree
    bsdf = next((n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"), None) \
        or s_node(tree, "ShaderNodeBsdfPrincipled", 0, 300)

    def image_node(path, y, non_color):
        node = s_node(tree, "ShaderNodeTexImage", -700, y)
        node.image = s_load_image(path, where, non_color)
        return node

    base = image_node(color, 400, False).outputs["Color"]
    if maps.get("ao"):
        mix = s_node(tree, "ShaderNodeMixRGB", -300, 400)
        mix.blend_type, mix.inputs["Fac"].default_value = "MULTIPLY", 1.0
        tree.links.new(base, mix.inputs["Color1"])
        tree.links.new(image_node(maps["ao"], 700, True).outputs["Color"], mix.inputs["Color2"])
        base = mix.outputs["Color"]
    tree.links.new(base, bsdf.inputs["Base Color"])
    for name, socket, y in (("rough", "Roughness", 100), ("metal", "Metallic", -200)):
        if maps.get(name):
            tree.links.new(image_node(maps[name], y, True).outputs["Color"], bsdf.inputs[socket])
    if maps.get("nor_gl"):
        normal = s_node(tree, "ShaderNodeNormalMap", -300, -500)
        tree.links.new(image_node(maps["nor_gl"], -500, True).outputs["Color"], normal.inputs["Color"])
        tree.links.new(normal.outputs["Normal"], bsdf.inputs["Normal"])
    if obj.material_slots:
        obj.material_slots[0].material = mat
    else:
        obj.data.materials.append(mat)
    return obj


def s_import_hdri(bundle, main, label, where):
    import bpy
    world = bpy.data.worlds.new(label)
    world.use_nodes = True
    tree = world.node_tree
    background = next((n for n in tree.nodes if n.type == "BACKGROUND"), None) \
        or s_node(tree, "ShaderNodeBackground", 0, 300)
    env = s_node(tree, "ShaderNodeTexEnvironment", -400, 300)
    env.image = s_load_image(main, where)
    tree.links.new(env.outputs["Color"], background.inputs["Color"])
    bpy.context.scene.world = world
    return None


def s_builtin_asset_import(obj, p, spec):
    """The step: (obj: its target or None, params, bounds). Returns the step's object: the
    model's root, the texture's target, None for an HDRI."""
    from . import bounds
    from .transaction import s_Transaction
    where = "asset.import"
    given = {k: bounds.value(p, spec, k) for k in KEY_FIELDS}
    key = s_key({k: v for k, v in given.items() if v is not None}, where, format_default=True)
    kind = key[2]
    if obj is not None and kind != "texture":
        raise CommandError("%s: a%s %s import takes no target" % (where, "n" if kind == "hdri" else "", kind))
    bundle = STAGED.get(key)
    if bundle is None:
        raise CommandError("%s: %s is not staged (the executor sends an asset's files with asset_stage before "
                           "the plan runs)" % (where, key_text(key)))
    guard = s_Transaction("asset.import")       # a failed import leaves nothing behind
    try:
        with s_private_dir() as root:
            main = bundle.write(root)
            if kind == "model":
                return s_import_model(bundle, main, key[1], where)
            if kind == "texture":
                return s_import_texture(bundle, root, obj, key[1], where)
            return s_import_hdri(bundle, main, key[1], where)
    except BaseException as e:
        try:
            guard.rollback()
        finally:
            guard.discard()
        if isinstance(e, OSError):
            raise CommandError("%s: %s: %s" % (where, key_text(key), e))
        raise
