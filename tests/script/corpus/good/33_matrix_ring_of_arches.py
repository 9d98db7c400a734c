import bpy
import math
from mathutils import Matrix, Vector

# Arches placed around a ring with rotation matrices.
count = 10
radius = 6.0
for i in range(count):
    angle = 2 * math.pi * i / count
    rot = Matrix.Rotation(angle, 4, "Z")
    position = rot @ Vector((radius, 0.0, 0.0))
    bpy.ops.mesh.primitive_torus_add(major_radius=1.0, minor_radius=0.15, location=position)
    arch = bpy.context.active_object
    arch.name = f"Arch{i}"
    arch.rotation_euler = (math.pi / 2, 0, angle + math.pi / 2)
    arch.scale = (1.0, 1.0, 1.0 + 0.05 * i)
