# expect: static operator
import bpy
bpy.ops.mesh.primitive_cube_add(**{'size': 2})
