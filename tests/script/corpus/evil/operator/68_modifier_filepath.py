# expect: static attribute
import bpy
bpy.ops.mesh.primitive_plane_add()
m = bpy.context.object.modifiers.new('o', 'OCEAN')
m.filepath = '/tmp/blendmq-evil-ocean'
