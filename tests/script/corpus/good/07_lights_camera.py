import bpy
import math
from mathutils import Vector

light_data = bpy.data.lights.new(name="KeyLight", type='AREA')
light_data.energy = 500
light_data.size = 2.0
light = bpy.data.objects.new(name="KeyLight", object_data=light_data)
bpy.context.collection.objects.link(light)
light.location = (4, -4, 6)

cam_data = bpy.data.cameras.new("MainCamera")
cam_data.lens = 50
cam = bpy.data.objects.new("MainCamera", cam_data)
bpy.context.collection.objects.link(cam)
cam.location = Vector((7, -7, 5))
direction = Vector((0, 0, 0.5)) - cam.location
cam.rotation_euler = direction.to_track_quat('-Z', 'Y').to_euler()
bpy.context.scene.camera = cam
bpy.ops.object.light_add(type='SUN', radius=1, location=(0, 0, 10), rotation=(math.radians(30), 0, 0))
