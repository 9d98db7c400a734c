# expect: static module
# an assignment expression aliasing a module
import bpy
import math
if (m := math):
    bpy.ops.mesh.primitive_cube_add(size=m.sqrt(2))
