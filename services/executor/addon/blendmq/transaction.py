"""transaction — atomic plans (plan_begin, plan_commit, plan_rollback) and, in a GUI Blender,
one undo step per plan.

Undo in the GUI: Blender pushes no undo step for operators called from Python, but a plan's
steps run over many passes of Blender's main loop and the user may act (and push undo steps)
in between. So plan_begin pushes a step that holds the scene as it is ("blendmq: before plan
X") and turns global undo off while the plan runs; plan_commit turns it back on and pushes one
step holding the whole plan ("blendmq plan X"): one Ctrl+Z goes back to before the plan, and
Ctrl+Shift+Z brings it back. A rollback restores the scene itself and pushes nothing. The
user's undo preference is put back as it was, without marking the preferences changed; a lost
client or the add-on stopping ends an open bracket like a commit (what the plan did so far
stays one undo step).
"""
import bpy

from .args import CommandError
from .log import log
from .scene import s_ensure_object_mode


def s_undo_push(message):
    try:
        bpy.ops.ed.undo_push(message=message)
    except RuntimeError as e:
        log("undo push failed: %s" % e)


class s_UndoBracket:
    """GUI only: global undo off between plan_begin and the plan's end."""

    def __init__(self, plan_id):
        self.plan_id = plan_id
        prefs = bpy.context.preferences
        s_undo_push("blendmq: before plan %s" % plan_id)
        self.global_undo = prefs.edit.use_global_undo
        dirty = prefs.is_dirty
        prefs.edit.use_global_undo = False
        prefs.is_dirty = dirty              # our switch is not the user's change
        self.open = True

    def close(self, push_label=None):
        """Global undo back as it was; push one step named push_label if given."""
        if not self.open:
            return
        self.open = False
        prefs = bpy.context.preferences
        dirty = prefs.is_dirty
        prefs.edit.use_global_undo = self.global_undo
        prefs.is_dirty = dirty
        if push_label:
            s_undo_push(push_label)


class s_Transaction:
    """What a plan changed, so a failed plan can put the scene back as it was.

    At plan_begin the names of existing objects, meshes and materials are noted. Before a
    step acts on an object that existed before the plan, its transform, selection, material
    slots and a copy of its mesh (smooth flags and mesh-linked materials live there) are
    saved, once. Rollback deletes what the plan created and restores what it touched."""

    def __init__(self, plan_id):
        self.plan_id = plan_id
        self.objects = set(bpy.data.objects.keys())
        self.meshes = set(bpy.data.meshes.keys())
        self.materials = set(bpy.data.materials.keys())
        vl = bpy.context.view_layer
        self.active = vl.objects.active.name if vl.objects.active else None
        self.selected = [o.name for o in vl.objects.selected]
        self.saved = {}
        self.undo = None        # the s_UndoBracket in a GUI Blender

    def touch(self, obj):
        if obj is None or obj.name not in self.objects or obj.name in self.saved:
            return
        mesh = obj.data.copy() if obj.type == "MESH" and obj.data is not None else None
        self.saved[obj.name] = {
            "location": obj.location.copy(), "rotation": obj.rotation_euler.copy(),
            "scale": obj.scale.copy(), "mesh": mesh,
            "slots": [(slot.link, slot.material) for slot in obj.material_slots],
            "modifiers": [m.name for m in obj.modifiers],
            "parent": obj.parent, "parent_inverse": obj.matrix_parent_inverse.copy(),
        }

    def touch_for_step(self, target):
        vl = bpy.context.view_layer
        if target is not None:
            self.touch(vl.objects.get(target))
            return
        self.touch(vl.objects.active)
        for o in vl.objects.selected:
            self.touch(o)

    def rollback(self):
        s_ensure_object_mode()
        removed = [o.name for o in bpy.data.objects if o.name not in self.objects]
        for name in removed:
            bpy.data.objects.remove(bpy.data.objects[name], do_unlink=True)
        restored = []
        for name, st in self.saved.items():
            obj = bpy.data.objects.get(name)
            if obj is None:
                continue
            for mod in [m for m in obj.modifiers if m.name not in st["modifiers"]]:
                obj.modifiers.remove(mod)           # what object.modifier added
            obj.parent, obj.matrix_parent_inverse = st["parent"], st["parent_inverse"]
            obj.location, obj.rotation_euler, obj.scale = st["location"], st["rotation"], st["scale"]
            if st["mesh"] is not None:
                changed = obj.data
                obj.data = st["mesh"]
                st["mesh"] = None
                if changed.users == 0:
                    bpy.data.meshes.remove(changed)
            for slot, (link, mat) in zip(obj.material_slots, st["slots"]):
                if link == "OBJECT":
                    slot.link, slot.material = link, mat
            restored.append(name)
        for coll, before in ((bpy.data.meshes, self.meshes), (bpy.data.materials, self.materials)):
            for block in [b for b in coll if b.name not in before and b.users == 0]:
                coll.remove(block)
        vl = bpy.context.view_layer
        for o in list(vl.objects.selected):
            o.select_set(False)
        for name in self.selected:
            if name in vl.objects:
                vl.objects[name].select_set(True)
        vl.objects.active = vl.objects.get(self.active) if self.active else None
        self.discard()
        return {"removed": sorted(removed), "restored": sorted(restored)}

    def discard(self):
        for st in self.saved.values():
            if st["mesh"] is not None and st["mesh"].users == 0:
                bpy.data.meshes.remove(st["mesh"])
                st["mesh"] = None


class TXN:
    current = None


def s_plan_id(args):
    plan_id = args.get("plan_id")
    if not isinstance(plan_id, str) or not plan_id or len(plan_id) > 64:
        raise CommandError("plan_id must be a string of 1..64 characters")
    return plan_id


def s_close_undo(txn, push_label=None):
    if txn is not None and txn.undo is not None:
        txn.undo.close(push_label)
        txn.undo = None


def cmd_plan_begin(args):
    plan_id = s_plan_id(args)
    if TXN.current is not None:      # a plan the executor lost track of: keep its changes
        s_close_undo(TXN.current, "blendmq plan %s (interrupted)" % TXN.current.plan_id)
        TXN.current.discard()
    TXN.current = s_Transaction(plan_id)
    if not bpy.app.background:
        TXN.current.undo = s_UndoBracket(plan_id)
    return {"plan_id": plan_id, "objects": len(TXN.current.objects)}, None


def cmd_plan_commit(args):
    plan_id = s_plan_id(args)
    if TXN.current is not None and TXN.current.plan_id == plan_id:
        s_close_undo(TXN.current)
        TXN.current.discard()
        TXN.current = None
    if not bpy.app.background:       # one undo step for the whole plan in the GUI
        s_undo_push("blendmq plan %s" % plan_id)
    return {"plan_id": plan_id}, None


def cmd_plan_rollback(args):
    plan_id = s_plan_id(args)
    if TXN.current is None or TXN.current.plan_id != plan_id:
        raise CommandError("no open transaction for plan %s" % plan_id)
    txn, TXN.current = TXN.current, None
    try:
        return txn.rollback(), None
    finally:
        s_close_undo(txn)           # the scene is as before the plan: no undo step


def end_undo_bracket():
    """The client went away (or the add-on stops) mid-plan: undo works again, and what the
    plan did so far is one undo step. The transaction stays open for a later rollback."""
    txn = TXN.current
    if txn is not None and txn.undo is not None:
        s_close_undo(txn, "blendmq plan %s (interrupted)" % txn.plan_id)
