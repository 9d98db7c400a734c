# expect: static rebind
# a def replaces an imported function
import bpy
from math import sqrt
def sqrt(x):
    return x
bpy.ops.mesh.primitive_cube_add(size=sqrt(4))
