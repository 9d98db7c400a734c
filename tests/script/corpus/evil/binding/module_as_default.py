# expect: static module
# a module smuggled through a parameter default
import bpy
import math
def size(m=math):
    return m.sqrt(2)
bpy.ops.mesh.primitive_cube_add(size=size())
