# expect: static attribute
# math.sin(...) is trusted as the math module's API: replace it with a bound method first
import bpy
import math
math.sin = bpy.context.active_object.user_remap
math.sin(None)
