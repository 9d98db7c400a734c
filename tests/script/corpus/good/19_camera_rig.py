import bpy
import math
from mathutils import Vector

# A subject, a camera on a circle looking at it, and a three-point light setup.
bpy.ops.mesh.primitive_monkey_add(size=1.5, location=(0, 0, 1))
subject = bpy.context.active_object
subject.name = "Subject"

bpy.ops.object.camera_add(location=(6, -6, 4))
cam = bpy.context.active_object
cam.name = "RigCamera"
direction = subject.location - cam.location
cam.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
cam.data.lens = 50
bpy.context.scene.camera = cam

lights = {"Key": (4, -3, 5, 800), "Fill": (-4, -2, 3, 300), "Rim": (0, 5, 4, 500)}
for name, (x, y, z, power) in lights.items():
    bpy.ops.object.light_add(type="AREA", location=(x, y, z))
    light = bpy.context.active_object
    light.name = name + "Light"
    light.data.energy = power
    light.data.size = 2.0
    aim = (Vector((0, 0, 1)) - light.location).normalized()
    light.rotation_euler = aim.to_track_quat("-Z", "Y").to_euler()
