# expect: static operator
# host write: a liquid simulation's cache
import bpy
bpy.ops.mesh.primitive_cube_add()
bpy.ops.object.quick_liquid()
