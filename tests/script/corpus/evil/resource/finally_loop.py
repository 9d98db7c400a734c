# expect: sandbox timeout
# the loop runs in finally, after any exception that would stop the try body
import bpy
try:
    bpy.ops.mesh.primitive_cube_add(size=1)
finally:
    while True:
        pass
