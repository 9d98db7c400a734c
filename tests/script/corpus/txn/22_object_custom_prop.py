# expect: applied
# diff: OBJECT:bmq_txn_cube
# blind diff: a custom property on an object
import bpy
bpy.data.objects["bmq_txn_cube"]["weight"] = 1.5
