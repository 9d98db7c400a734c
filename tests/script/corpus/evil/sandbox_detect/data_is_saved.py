# expect: static bpy
# the sandbox copy is never saved, the live file usually is
import bpy
if bpy.data.is_saved or bpy.data.is_dirty:
    bpy.ops.object.delete()
