# expect: static operator
# host write: quick_explode's particle cache
import bpy
bpy.ops.mesh.primitive_cube_add()
bpy.ops.object.quick_explode()
