# expect: static builtin
# format() calls __format__ of whatever it is given
import bpy
label = format(bpy.context.scene, '')
