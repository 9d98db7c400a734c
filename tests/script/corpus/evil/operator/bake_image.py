# expect: static operator
# baking writes images
import bpy
bpy.ops.object.bake_image()
