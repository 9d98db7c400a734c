# expect: diverged
# coin left to the fingerprint: a set of Blender objects iterates in the order of their hashes,
# which are their addresses in memory, different in the fresh sandbox Blender and the
# long-running live one. The order lands in the scene; live ends elsewhere than the sandbox,
# rolls back exactly and says diverged.
import bpy
for i in range(6):
    bpy.ops.mesh.primitive_cube_add(size=0.1, location=(i * 0.2, -9.0, 0.0))
for i, o in enumerate(set(bpy.data.objects)):
    o["bmq_order"] = i
