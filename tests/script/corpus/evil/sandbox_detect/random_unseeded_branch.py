# expect: pass harmless
# an unseeded random branch: sandbox and live may take different branches, but both
# branches are inside the rules, so what live runs was as checkable as what the sandbox ran
import bpy
import random
random.seed()
if random.random() < 0.5:
    bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 5))
else:
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, location=(0, 0, 5))
bpy.context.active_object.name = 'detect_random'
