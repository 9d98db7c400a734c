# expect: static rebind
# a global declaration of an imported name is refused even without an assignment
import bpy
import math
def radius():
    global math
    return math.pi
bpy.ops.mesh.primitive_cube_add(size=radius())
