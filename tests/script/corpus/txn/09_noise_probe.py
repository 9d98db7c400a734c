# expect: applied
# coin: mathutils.noise.random() depends on the seed an earlier script left live
import bpy
import mathutils.noise
v = mathutils.noise.random()
if v > 0.5:
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(v * 4.0, 0.0, 1.0))
else:
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, location=(v * 4.0, 0.0, 1.0))
