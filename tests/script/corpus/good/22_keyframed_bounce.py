import bpy

# A ball that bounces three times: location and scale keyframes.
bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, location=(0, 0, 3))
ball = bpy.context.active_object
ball.name = "BouncingBall"
scene = bpy.context.scene
scene.frame_start = 1
scene.frame_end = 72

frame = 1
height = 3.0
for bounce in range(3):
    ball.location.z = height
    ball.scale = (1.0, 1.0, 1.0)
    ball.keyframe_insert(data_path="location", frame=frame)
    ball.keyframe_insert(data_path="scale", frame=frame)
    frame += 12
    ball.location.z = 0.5
    ball.scale = (1.2, 1.2, 0.8)
    ball.keyframe_insert(data_path="location", frame=frame)
    ball.keyframe_insert(data_path="scale", frame=frame)
    frame += 12
    height *= 0.6

action = ball.animation_data.action
try:
    curves = list(action.fcurves)
except AttributeError:      # Blender 5: a layered action keeps its curves in channel bags
    curves = [c for layer in action.layers for strip in layer.strips for bag in strip.channelbags for c in bag.fcurves]
print(f"{len(curves)} curves, last key at frame {frame - 12}")
