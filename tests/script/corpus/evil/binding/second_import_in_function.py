# expect: static rebind
# the same alias imported twice in different scopes (math at module level, random inside)
import bpy
import math as calc
def jitter():
    import random as calc
    return calc.random()
bpy.ops.mesh.primitive_cube_add(size=calc.sqrt(2) + jitter())
