# expect: static rebind
# a plain local assignment in a function shadows the module there (all scopes count)
import bpy
import random
def pick():
    random = bpy.context.scene
    return random.frame_current
bpy.ops.mesh.primitive_cube_add(size=pick() + 1)
