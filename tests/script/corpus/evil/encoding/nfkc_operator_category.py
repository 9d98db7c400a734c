# expect: static operator
# fullwidth category and operator names: bpy.ops.wm.quit_blender
import bpy
bpy.ｏｐｓ.ｗｍ.ｑｕｉｔ_ｂｌｅｎｄｅｒ()
