# expect: static limit
import bpy
for i in range(1000):
    for j in range(1000):
        for k in range(1000):
            bpy.ops.mesh.primitive_cube_add(location=(i, j, k))
