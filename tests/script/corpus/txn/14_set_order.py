# expect: applied or diverged
# coin: the iteration order of a set of strings follows the per-process hash seed
# (PYTHONHASHSEED=0 in the sandbox; live's seed is the live Blender's)
import bpy
names = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
for i, n in enumerate(set(names)):
    bpy.ops.mesh.primitive_cube_add(size=0.1, location=(i * 0.3, 7.0, 0.0))
    bpy.context.active_object.name = "bmq_set_" + n
