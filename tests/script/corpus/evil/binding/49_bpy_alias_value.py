# expect: static bpy
import bpy as b
x = b
x.utils.execfile('/tmp/x.py')
