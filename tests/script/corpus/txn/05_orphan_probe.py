# expect: applied
# persistence: branches on the orphan the previous script made. The sandbox's copy keeps
# orphans (state.save), so the branch is the same in the sandbox and live.
import bpy
if bpy.data.meshes.get("bmq_txn_orphan") is None:
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
else:
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.3, location=(0.0, 3.0, 0.0))
