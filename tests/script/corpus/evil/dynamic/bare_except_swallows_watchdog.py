# expect: static except
# a bare except catches the live watchdog's timeout exception and keeps running
import bpy
while True:
    try:
        bpy.ops.mesh.primitive_cube_add(size=1)
        bpy.ops.object.delete()
    except:
        pass
