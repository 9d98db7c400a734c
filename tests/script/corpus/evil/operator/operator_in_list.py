# expect: static operator
# an operator stored in a list (its arguments are never RNA-checked)
import bpy
[bpy.ops.mesh.primitive_cube_add][0](size=1e9)
