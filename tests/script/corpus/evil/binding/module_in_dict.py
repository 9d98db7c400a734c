# expect: static module
# a module stored as a dict value
import bpy
import math
lib = {'m': math}
bpy.ops.mesh.primitive_cube_add(size=lib['m'].sqrt(2))
