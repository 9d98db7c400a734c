# expect: static module
# a module formatted into an f-string (its repr leaks the file path of the module)
import bpy
import random
label = f"{random!r}"
bpy.ops.mesh.primitive_cube_add(size=1)
