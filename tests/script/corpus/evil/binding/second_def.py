# expect: static rebind
# the same function defined twice: which body runs depends on where the call is
import bpy
def build():
    bpy.ops.mesh.primitive_cube_add(size=1)
build()
def build():
    bpy.ops.object.delete()
build()
