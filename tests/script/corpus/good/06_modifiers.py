import bpy

bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 1))
obj = bpy.context.active_object
obj.name = "SmoothBox"
sub = obj.modifiers.new(name="Subsurf", type='SUBSURF')
sub.levels = 2
sub.render_levels = 2
bevel = obj.modifiers.new(name="Bevel", type='BEVEL')
bevel.width = 0.05
bevel.segments = 3
arr = obj.modifiers.new(name="Array", type='ARRAY')
arr.count = 4
arr.relative_offset_displace = (1.2, 0, 0)
bpy.ops.object.shade_smooth()
