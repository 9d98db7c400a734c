# expect: sandbox rejected
# host write: the modifier type put together at run time, then frames stepped
import bpy
cube = bpy.data.objects["bmq_txn_cube"]
cube.modifiers.new("sim", type="FLU" + "ID")
bpy.context.scene.frame_set(3)
