# expect: static module
# a module passed as an argument
import bpy
import random
def use(m):
    return m.random()
bpy.ops.mesh.primitive_cube_add(size=use(random))
