# expect: static rebind
# positional-only and keyword-only parameters are bindings as well
import bpy
import mathutils
def build(size, /, *, mathutils=None):
    return mathutils.Vector((size, 0, 0))
bpy.ops.mesh.primitive_cube_add(size=1)
