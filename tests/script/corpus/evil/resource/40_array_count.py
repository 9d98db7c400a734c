# expect: static limit
import bpy
bpy.ops.mesh.primitive_cube_add()
arr = bpy.context.object.modifiers.new('a', 'ARRAY')
arr.count = 100000
