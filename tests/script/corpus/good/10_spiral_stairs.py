import bpy
from math import cos, sin, radians

steps = 24
for i in range(steps):
    angle = radians(i * 15)
    bpy.ops.mesh.primitive_cube_add(size=1, location=(2 * cos(angle), 2 * sin(angle), i * 0.2))
    step = bpy.context.active_object
    step.scale = (1.2, 0.4, 0.08)
    step.rotation_euler[2] = angle
    step.name = "Step.%03d" % i
bpy.ops.mesh.primitive_cylinder_add(radius=0.3, depth=steps * 0.2, location=(0, 0, steps * 0.1))
bpy.context.active_object.name = "Pole"
