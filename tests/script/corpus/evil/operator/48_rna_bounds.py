# expect: static rna
import bpy
bpy.ops.mesh.primitive_uv_sphere_add(segments=2, ring_count=1)
