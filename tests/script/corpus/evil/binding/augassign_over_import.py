# expect: static rebind
# augmented assignment is a binding too
import bpy
from math import pi
pi += 1
bpy.ops.mesh.primitive_cube_add(size=pi)
