# expect: static operator
import bpy
bpy.ops.wm.save_as_mainfile(filepath='/tmp/blendmq-evil.blend')
