# expect: static operator
# a category stored in a variable, then an operator taken from it
import bpy
o = bpy.ops.object
o.delete()
