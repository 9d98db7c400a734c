# expect: static limit
import bpy
bpy.ops.mesh.primitive_cube_add()
bpy.ops.object.subdivision_set(level=12)
