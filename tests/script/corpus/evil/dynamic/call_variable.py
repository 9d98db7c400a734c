# expect: static call
# a builtin called through a variable: the checker sees p(...), Python runs print
import bpy
p = print
p('leak', end='')
bpy.ops.mesh.primitive_cube_add(size=1)
