# expect: static rebind
# the reported attack: x is checked as bpy.ops, but on the live machine (more objects
# than the sandbox copy? never mind, any condition) x becomes bpy.context, so
# x.object.shape_key_add(...) is no operator call at all
import bpy
from bpy import ops as x
if len(bpy.data.objects) > 3:
    from bpy import context as x
x.object.shape_key_add(from_mix=False)
