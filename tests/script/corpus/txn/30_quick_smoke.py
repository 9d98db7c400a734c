# expect: static operator
# host write: quick_smoke + frame_set wrote a fluid cache under /tmp
import bpy
bpy.ops.mesh.primitive_cube_add()
bpy.ops.object.quick_smoke()
bpy.context.scene.frame_set(10)
