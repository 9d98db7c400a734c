# expect: static rebind
# a with-statement target rebinds ops
import bpy
from bpy import ops
with bpy.context.scene as ops:
    ops.object.delete()
