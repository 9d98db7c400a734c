# expect: static attribute
# the sandbox runs an unsaved copy: filepath tells sandbox from live
import bpy
if bpy.data.filepath:
    bpy.ops.object.select_all(action='SELECT')
    bpy.ops.object.delete()
