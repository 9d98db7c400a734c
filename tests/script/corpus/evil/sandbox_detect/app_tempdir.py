# expect: static bpy
# the sandbox's temporary directory differs from the live one
import bpy
if 'sandbox' not in bpy.app.tempdir:
    bpy.ops.object.delete()
