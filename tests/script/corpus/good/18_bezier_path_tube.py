import bpy

# A curved pipe: a bezier curve with a bevel depth, then a second curve as a path.
bpy.ops.curve.primitive_bezier_curve_add(location=(0, 0, 0))
pipe = bpy.context.active_object
pipe.name = "Pipe"
pipe.data.bevel_depth = 0.15
pipe.data.bevel_resolution = 6
pipe.data.use_fill_caps = True

points = pipe.data.splines[0].bezier_points
points[0].co = (-3.0, 0.0, 0.0)
points[0].handle_left = (-4.0, -1.0, 0.0)
points[0].handle_right = (-2.0, 1.0, 0.0)
points[1].co = (3.0, 0.0, 1.0)
points[1].handle_left = (2.0, -1.0, 1.0)
points[1].handle_right = (4.0, 1.0, 1.0)

bpy.ops.curve.primitive_nurbs_path_add(location=(0, 3, 0))
path = bpy.context.active_object
path.name = "GuidePath"
path.data.resolution_u = 24
