# expect: static rebind
# a parameter named like a module: math.sqrt inside is whatever the caller passed
import bpy
import math
def size_of(math):
    return math.sqrt(2)
bpy.ops.mesh.primitive_cube_add(size=size_of(bpy.context.scene))
