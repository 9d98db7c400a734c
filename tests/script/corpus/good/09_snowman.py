import bpy

parts = [("Base", 1.0, 1.0), ("Middle", 0.7, 2.5), ("Head", 0.45, 3.6)]
white = bpy.data.materials.new("Snow")
white.diffuse_color = (0.95, 0.95, 1.0, 1.0)
for name, radius, z in parts:
    bpy.ops.mesh.primitive_uv_sphere_add(radius=radius, location=(0, 0, z))
    ball = bpy.context.active_object
    ball.name = name
    ball.data.materials.append(white)
    bpy.ops.object.shade_smooth()
bpy.ops.mesh.primitive_cone_add(radius1=0.08, depth=0.5, location=(0, -0.55, 3.6), rotation=(1.5708, 0, 0))
bpy.context.active_object.name = "Nose"
