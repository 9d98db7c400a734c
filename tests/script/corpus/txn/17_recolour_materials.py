# expect: applied
# diff: MATERIAL:bmq_txn_mat
# blind diff: every material turned red
import bpy
for m in bpy.data.materials:
    m.diffuse_color = (1.0, 0.0, 0.0, 1.0)
    m.roughness = 0.9
