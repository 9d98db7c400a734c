# expect: static module
# a module stored in a list, used through a subscript
import bpy
import random
tools = [random]
tools[0].seed(1)
bpy.ops.mesh.primitive_cube_add(size=1)
