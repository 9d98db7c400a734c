# expect: sandbox rejected
# host write: a cloth simulation stepped by frame_set
import bpy
bpy.ops.mesh.primitive_plane_add(size=2.0, location=(0.0, 0.0, 2.0))
plane = bpy.context.active_object
plane.modifiers.new("cloth", type="CL" + "OTH")
for f in range(1, 4):
    bpy.context.scene.frame_set(f)
