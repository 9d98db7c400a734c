import bpy
import math

count = 12
radius = 4.0
for i in range(count):
    angle = 2 * math.pi * i / count
    x = radius * math.cos(angle)
    y = radius * math.sin(angle)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.4, segments=24, ring_count=12, location=(x, y, 0.4))
    bpy.context.active_object.name = "Sphere_%02d" % i
