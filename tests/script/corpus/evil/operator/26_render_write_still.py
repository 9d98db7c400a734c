# expect: static operator
import bpy
bpy.ops.render.render(write_still=True)
