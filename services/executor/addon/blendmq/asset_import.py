"""asset_import — a staged asset becomes scene content: the asset.import step (issue 16).

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
  texture: a Principled BSDF material from the files' maps, by the names proto/assets.json
           declares for the executor and this add-on alike (asset_proto.TEXTURE_MAPS: diffuse ->
           Base Color, ao multiplied into it, normal -> Normal Map -> Normal, roughness ->
           Roughness, metallic -> Metallic, displacement -> Displacement -> the output's
           Displacement; data maps Non-Color), assigned to the target (required).
  hdri:    a new world, Environment Texture -> Background, made the scene's world. No target.
A failed import removes what it had added before the error is raised (a local s_Transaction);
inside a plan, the plan's own transaction removes a successful import's work on rollback."""
import contextlib
import os
import shutil
import tempfile

from . import compat
from .args import CommandError
from .asset_proto import TEXTURE_MAPS
from .asset_stage import KEY_FIELDS, STAGED, key_text, s_key


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
    compat.deselect_all(vl)
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
    uses = {name: (use, socket) for name, use, socket, _required in TEXTURE_MAPS}
    color = next((maps[n] for n, (use, _s) in uses.items() if use == "base_color" and maps.get(n)), main)
    mat = bpy.data.materials.new(label)
    mat.use_nodes = True
    tree = mat.node_tree
    bsdf = next((n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"), None) \
        or s_node(tree, "ShaderNodeBsdfPrincipled", 0, 300)
    output = next((n for n in tree.nodes if n.type == "OUTPUT_MATERIAL"), None)

    def image_node(path, y, non_color):
        node = s_node(tree, "ShaderNodeTexImage", -700, y)
        node.image = s_load_image(path, where, non_color)
        return node

    base = image_node(color, 400, False).outputs["Color"]
    y = 100
    for name, (use, socket) in uses.items():        # the declared order
        path = maps.get(name)
        if not path or use == "base_color":
            continue
        y -= 300
        if use == "multiply_base":
            mix = s_node(tree, "ShaderNodeMixRGB", -300, 400)
            mix.blend_type, mix.inputs["Fac"].default_value = "MULTIPLY", 1.0
            tree.links.new(base, mix.inputs["Color1"])
            tree.links.new(image_node(path, 700, True).outputs["Color"], mix.inputs["Color2"])
            base = mix.outputs["Color"]
        elif use == "socket" and socket in bsdf.inputs:
            tree.links.new(image_node(path, y, True).outputs["Color"], bsdf.inputs[socket])
        elif use == "normal_map":
            normal = s_node(tree, "ShaderNodeNormalMap", -300, y)
            tree.links.new(image_node(path, y, True).outputs["Color"], normal.inputs["Color"])
            tree.links.new(normal.outputs["Normal"], bsdf.inputs["Normal"])
        elif use == "displacement" and output is not None:
            disp = s_node(tree, "ShaderNodeDisplacement", -300, y)
            tree.links.new(image_node(path, y, True).outputs["Color"], disp.inputs["Height"])
            tree.links.new(disp.outputs["Displacement"], output.inputs["Displacement"])
    tree.links.new(base, bsdf.inputs["Base Color"])
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
    if bundle is None and given.get("format") is None:
        bundle = STAGED.get_any_format(key)
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
