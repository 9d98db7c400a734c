# expect: static rebind
# mathematical bold letters normalise to 'sin': this rebinds the imported name
import bpy
from math import sin
𝐬𝐢𝐧 = print
sin('rebound')
bpy.ops.mesh.primitive_cube_add(size=1)
