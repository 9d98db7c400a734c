# expect: static host_write
# host write: a fluid modifier (its cache goes to disk when frames change)
import bpy
cube = bpy.data.objects["bmq_txn_cube"]
cube.modifiers.new("sim", type="FLUID")
bpy.context.scene.frame_set(5)
