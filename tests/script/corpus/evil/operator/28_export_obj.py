# expect: static operator
import bpy
bpy.ops.export_scene.obj(filepath='/tmp/blendmq-evil.obj')
