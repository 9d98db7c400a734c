# expect: static call
# a lambda called where it is written
import bpy
(lambda: bpy.ops.object.delete())()
