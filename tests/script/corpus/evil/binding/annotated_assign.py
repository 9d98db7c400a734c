# expect: static rebind
# an annotated assignment
import bpy
from mathutils import Vector
Vector: int = 3
bpy.ops.mesh.primitive_cube_add(size=1)
