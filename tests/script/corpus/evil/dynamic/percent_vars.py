# expect: static builtin
# %-formatting against vars() reaches the module namespace
import bpy
text = '%(bpy)s' % vars()
