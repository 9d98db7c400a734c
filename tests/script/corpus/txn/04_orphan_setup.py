# expect: applied
# diff: MESH:bmq_txn_orphan
# persistence: a mesh with no users (it was never saved into the sandbox's copy)
import bpy
bpy.data.meshes.new("bmq_txn_orphan")
