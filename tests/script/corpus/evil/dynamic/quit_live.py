# expect: static builtin
# quit() ends the live Blender
import bpy
bpy.ops.mesh.primitive_cube_add(size=1)
quit()
