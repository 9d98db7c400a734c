# expect: static rebind
# del unbinds an imported name (a later use sees whatever is bound next)
import bpy
import math
del math
bpy.ops.mesh.primitive_cube_add(size=1)
