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
print(f"{len(action.fcurves)} curves, last key at frame {frame - 12}")
