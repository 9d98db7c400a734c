import bpy

# A fence: one post, repeated by an array modifier, plus two rails.
bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 0.5))
post = bpy.context.active_object
post.name = "FencePost"
post.scale = (0.1, 0.1, 1.0)
bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)

array = post.modifiers.new(name="Posts", type="ARRAY")
array.count = 12
array.use_relative_offset = False
array.use_constant_offset = True
array.constant_offset_displace = (0.8, 0, 0)

for height in (0.35, 0.8):
    bpy.ops.mesh.primitive_cube_add(size=1, location=(4.4, 0, height))
    rail = bpy.context.active_object
    rail.name = f"Rail_{int(height * 100)}"
    rail.scale = (9.0, 0.05, 0.05)

bevel = post.modifiers.new(name="Bevel", type="BEVEL")
bevel.width = 0.01
bevel.segments = 2
