# expect: applied
# heavy: a 99 MB scene (snapshots, commits and fingerprints of 750,000 faces)
# diff: OBJECT:bmq_after_big
# a small script on the big scene: the sandbox's copy goes by path through the state folder
import bpy
bpy.ops.mesh.primitive_cube_add(size=0.3, location=(0.0, 25.0, 0.0))
bpy.context.active_object.name = "bmq_after_big"
