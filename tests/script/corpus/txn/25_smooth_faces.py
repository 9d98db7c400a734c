# expect: applied
# diff: MESH:
# blind diff: face flags and edge data of a mesh
import bpy
mesh = bpy.data.objects["bmq_txn_cube"].data
for p in mesh.polygons:
    p.use_smooth = True
