# expect: static bpy
# the same probe through context.blend_data
import bpy
if bpy.context.blend_data.filepath:
    bpy.ops.object.delete()
