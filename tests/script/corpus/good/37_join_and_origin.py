import bpy

# A dumbbell: two spheres and a bar joined into one object, origin set to geometry.
parts = []
for x in (-1.0, 1.0):
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.4, location=(x, 0, 0.4))
    parts.append(bpy.context.active_object)
bpy.ops.mesh.primitive_cylinder_add(radius=0.08, depth=2.0, location=(0, 0, 0.4), rotation=(0, 1.5708, 0))
bar = bpy.context.active_object
parts.append(bar)

bpy.ops.object.select_all(action="DESELECT")
for part in parts:
    part.select_set(True)
bpy.context.view_layer.objects.active = bar
bpy.ops.object.join()
dumbbell = bpy.context.active_object
dumbbell.name = "Dumbbell"
bpy.ops.object.origin_set(type="ORIGIN_GEOMETRY", center="BOUNDS")
bpy.ops.object.shade_smooth()
