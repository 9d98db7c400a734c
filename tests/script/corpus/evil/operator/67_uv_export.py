# expect: static operator
import bpy
bpy.ops.uv.export_layout(filepath='/tmp/blendmq-evil-uv.png')
