# expect: applied
# diff: SCENE:
# blind diff: a custom property on the scene
import bpy
bpy.context.scene["bmq_note"] = "changed by a script"
bpy.context.scene["bmq_level"] = 7
