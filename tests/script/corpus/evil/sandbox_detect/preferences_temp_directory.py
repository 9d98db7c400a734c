# expect: static attribute
# the preferences' temporary directory differs between sandbox and live
import bpy
if bpy.context.preferences.filepaths.temporary_directory != '/tmp/':
    bpy.ops.object.delete()
