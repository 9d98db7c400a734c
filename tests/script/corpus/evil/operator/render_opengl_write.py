# expect: static operator
# the render category writes frames to render.filepath
import bpy
bpy.ops.render.opengl(write_still=True)
