# expect: static attribute
# the background sandbox has no screen and no area
import bpy
if bpy.context.screen is not None:
    bpy.ops.object.delete()
