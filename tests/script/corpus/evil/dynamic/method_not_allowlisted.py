# expect: static call
# a method outside the allowlist: user_remap() re-points every user of a data-block
# (every object of the live scene ends up using one mesh)
import bpy
bpy.ops.mesh.primitive_cube_add(size=1)
cube = bpy.context.active_object.data
for mesh in bpy.data.meshes:
    mesh.user_remap(cube)
