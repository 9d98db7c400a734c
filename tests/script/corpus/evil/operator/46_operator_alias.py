# expect: static operator
import bpy
f = bpy.ops.mesh.primitive_cube_add
f(size=1e9)
