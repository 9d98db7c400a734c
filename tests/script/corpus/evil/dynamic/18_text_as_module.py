# expect: static bpy
import bpy
t = bpy.data.texts.new('m')
t.write('import os')
t.as_module()
