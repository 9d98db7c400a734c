# expect: static bpy
# user resource directories depend on $HOME
import bpy
if 'sandbox' not in bpy.utils.user_resource('SCRIPTS'):
    bpy.ops.object.delete()
