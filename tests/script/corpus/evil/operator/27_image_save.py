# expect: static bpy
import bpy
img = bpy.data.images.new('i', 4, 4)
img.filepath_raw = '/tmp/blendmq-evil.png'
img.save()
