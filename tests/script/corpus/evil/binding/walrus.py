# expect: static rebind
# an assignment expression rebinds an imported function
import bpy
from math import sin
if (sin := print):
    sin('rebound')
bpy.ops.mesh.primitive_cube_add(size=1)
