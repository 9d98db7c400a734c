# expect: static rebind
# a lambda default binds an imported name to print
import bpy
from math import floor
show = lambda floor=print: floor('rebound')
show()
bpy.ops.mesh.primitive_cube_add(size=1)
