# expect: static rebind
# a name inside a tuple target
import bpy
import random
size, random = 1, print
random('rebound')
bpy.ops.mesh.primitive_cube_add(size=size)
