# expect: applied
# diff: SCENE:
# blind diff: render settings
import bpy
r = bpy.context.scene.render
r.resolution_x = 1234
r.resolution_percentage = 37
bpy.context.scene.frame_end = 77
