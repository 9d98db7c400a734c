# expect: static limit
import bpy
bpy.ops.mesh.primitive_cube_add()
mod = bpy.context.object.modifiers.new('s', 'SUBSURF')
mod.levels = 12
