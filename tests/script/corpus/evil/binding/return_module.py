# expect: static module
# a module returned from a function
import bpy
import mathutils
def lib():
    return mathutils
bpy.ops.mesh.primitive_cube_add(size=lib().Vector((1, 0, 0)).length)
