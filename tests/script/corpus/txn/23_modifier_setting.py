# expect: applied
# diff: OBJECT:bmq_txn_cube
# blind diff: a modifier's setting
import bpy
cube = bpy.data.objects["bmq_txn_cube"]
m = cube.modifiers.new("bmq_bevel", type="BEVEL")
m.width = 0.05
m.segments = 3
