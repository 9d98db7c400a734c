# expect: static bpy
import bpy
bpy.ｕｔｉｌｓ.execfile('/tmp/x.py')
