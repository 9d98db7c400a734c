# expect: static rebind
# nonlocal rebinding of an inner def
import bpy
def outer():
    def inner():
        return 1
    def swap():
        nonlocal inner
        inner = len
    swap()
    return inner('ab')
bpy.ops.mesh.primitive_cube_add(size=outer())
