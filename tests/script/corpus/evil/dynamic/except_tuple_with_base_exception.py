# expect: static except
# BaseException hidden in a tuple of exception types
import bpy
while True:
    try:
        bpy.ops.mesh.primitive_cube_add(size=1)
    except (ValueError, BaseException):
        pass
