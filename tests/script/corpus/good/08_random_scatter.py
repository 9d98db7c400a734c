import bpy
import random

random.seed(42)
for i in range(30):
    x = random.uniform(-8, 8)
    y = random.uniform(-8, 8)
    h = random.uniform(0.5, 2.5)
    bpy.ops.mesh.primitive_cylinder_add(vertices=12, radius=0.15, depth=h, location=(x, y, h / 2))
    trunk = bpy.context.active_object
    trunk.name = f"Trunk_{i:03d}"
    bpy.ops.mesh.primitive_cone_add(vertices=16, radius1=0.8, radius2=0.0, depth=1.5, location=(x, y, h + 0.6))
    crown = bpy.context.active_object
    crown.name = f"Crown_{i:03d}"
    crown.parent = trunk
    crown.location = (0, 0, h / 2 + 0.6)
