# expect: static rebind
# except ... as rebinds (and then unbinds) a function name
import bpy
def helper():
    bpy.ops.mesh.primitive_cube_add(size=1)
try:
    1 / 0
except ZeroDivisionError as helper:
    pass
helper()
