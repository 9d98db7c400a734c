# expect: static bpy
# the sandbox Blender runs in the background; the live one may not
import bpy
if not bpy.app.background:
    bpy.ops.object.select_all(action='SELECT')
    bpy.ops.object.delete()
