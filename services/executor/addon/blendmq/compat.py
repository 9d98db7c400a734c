"""What differs between the Blenders the add-on runs on (3.4 to 5.x), each named once here
(issue 30). Feature checks, read where Blender's API is read, never version-number tables.

Met so far, and where each is handled:
- view_layer.objects.selected holds None for an object bpy.data.objects.remove took until the
  layer resyncs (3.4, 4.3 and 5.2 alike; 3.4 happened to resync in the old rollback order):
  selected_objects / deselect_all below (transaction.py, scene.py, asset_import.py, steps.py).
- bpy.data.all_ids (5.x), Scene.node_tree gone (5.x: Scene.compositing_node_group), 4.3's
  dangling UvSculpt brush pointers, 4.x's UV layers sharing a pointer with their float2
  attribute, the Cycles camera group 4.x writes on save: fingerprint.py (standalone, so named
  there: SKIP_COLLECTIONS, SKIP_PAIRS, FORWARD_COMPAT, the cycle guard's key).
- Python 3.14's lazy annotations (5.x): script_exec.py's ANNOTATION_NAMES.
- Action.fcurves gone in 5.x (layered actions): action_fcurves below.
- Principled BSDF inputs renamed in 4.x (Transmission -> Transmission Weight, Emission ->
  Emission Color): principled_input below (steps.py's object.material).
- The OBJ importer: import_scene.obj is gone in 4.x, wm.obj_import (3.2+) everywhere:
  asset_import.py's feature check (hasattr(bpy.ops.wm, "obj_import")).
- Context overrides: bpy.context.temp_override (3.2+), never the old dict override (removed in
  4.0): transaction.py's s_window_override, render.py's viewport_screenshot.
- Render engines: look and render_preview use BLENDER_WORKBENCH, the one id every version shares
  (EEVEE's id changed in 4.2 and again in 5.0).
- Which Blender: the hello reply names its version (server.py); the executor shows it in status
  and checks scripts against proto/script_rna_blender_<version>.json (services/executor/
  blender_rna.c), refusing a Blender with no record. A script is compiled by the Python of the
  Blender that runs it (script_exec.prepare, in the sandbox and live: 3.11, 3.13, 3.14).
- Outside the add-on: 4.x needs libEGL for its first Workbench render, numpy for glTF, 5.x the
  extensions add-on's imports (deploy/blender-roots.sh's PACKAGES); Mesa's shader cache off in
  the sandbox (blender_root.c / sandbox_bwrap.c).
Each is exercised on 3.4, 4.3 and 5.2 by txn.compat and txn.commands_<version> (every link
command once per version).
"""

PRINCIPLED_INPUTS = {"transmission": ("Transmission Weight", "Transmission"),
                     "emission": ("Emission Color", "Emission"),
                     "emission_strength": ("Emission Strength",)}


def principled_input(bsdf, key):
    """The Principled BSDF's input for `key` under this Blender's name for it."""
    for name in PRINCIPLED_INPUTS[key]:
        socket = bsdf.inputs.get(name)
        if socket is not None:
            return socket
    raise KeyError("this Blender's Principled BSDF has no %s input" % key)


def selected_objects(view_layer):
    """The view layer's selected objects, without the None a removed object leaves."""
    return [o for o in view_layer.objects.selected if o is not None]


def deselect_all(view_layer):
    """Deselect every object of the view layer (select_set on a None would raise)."""
    for o in selected_objects(view_layer):
        o.select_set(False)


def action_fcurves(action):
    """An action's F-curves: Action.fcurves (3.x, 4.x), or every channel bag's of a layered
    action (5.x, where Action.fcurves is gone)."""
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    return [c for layer in action.layers for strip in layer.strips
            for bag in getattr(strip, "channelbags", ()) for c in bag.fcurves]
