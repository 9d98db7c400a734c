# expect: static attribute
import bpy
bpy.context.scene.render.filepath = '/tmp/blendmq-evil-render'
