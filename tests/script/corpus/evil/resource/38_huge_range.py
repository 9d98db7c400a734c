# expect: static limit
import bpy
for i in range(10 ** 9):
    bpy.ops.mesh.primitive_cube_add(size=1)
