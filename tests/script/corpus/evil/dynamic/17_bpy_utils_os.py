# expect: static bpy
import bpy
bpy.utils._os.system('touch /tmp/blendmq-evil-utils')
