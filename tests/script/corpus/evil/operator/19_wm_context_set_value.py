# expect: static operator
import bpy
bpy.ops.wm.context_set_value(data_path='scene.name', value='__import__("os").system("id")')
