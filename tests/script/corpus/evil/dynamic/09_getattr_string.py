# expect: static builtin
import bpy
u = getattr(bpy, 'ut' + 'ils')
u.execfile('/tmp/x.py')
