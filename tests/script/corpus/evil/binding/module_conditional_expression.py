# expect: static module
# a conditional expression choosing between modules
import bpy
import math
import random
m = math if len(bpy.data.objects) else random
bpy.ops.mesh.primitive_cube_add(size=m.sqrt(2))
