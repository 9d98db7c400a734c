# expect: applied
# diff: MESH:
# blind diff: moving every vertex showed no change (the old diff saw objects only)
import bpy
for mesh in bpy.data.meshes:
    for v in mesh.vertices:
        v.co.x += 0.25
