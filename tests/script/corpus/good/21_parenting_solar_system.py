import bpy
import math

# A tiny solar system: planets parented to empties that rotate around the sun.
bpy.ops.mesh.primitive_uv_sphere_add(radius=1.0, location=(0, 0, 0))
sun = bpy.context.active_object
sun.name = "Sun"

planets = [("Mercury", 2.0, 0.2), ("Venus", 3.0, 0.35), ("Earth", 4.2, 0.4), ("Mars", 5.5, 0.3)]
for name, distance, radius in planets:
    bpy.ops.object.empty_add(type="PLAIN_AXES", location=(0, 0, 0))
    pivot = bpy.context.active_object
    pivot.name = name + "Pivot"
    pivot.parent = sun
    bpy.ops.mesh.primitive_uv_sphere_add(radius=radius, location=(distance, 0, 0))
    planet = bpy.context.active_object
    planet.name = name
    planet.parent = pivot
    pivot.rotation_euler.z = math.radians(distance * 40)
