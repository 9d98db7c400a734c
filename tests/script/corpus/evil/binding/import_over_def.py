# expect: static rebind
# an import replaces a def'd function
import bpy
def sin(x):
    return 0.5
from math import sin
bpy.ops.mesh.primitive_cube_add(size=sin(1) + 1)
