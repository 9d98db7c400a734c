# expect: sandbox timeout
# a range the literal check cannot size, filled with operator calls
import bpy
n = 10 ** 4
for i in range(n * n):
    bpy.ops.mesh.primitive_cube_add(size=0.1)
