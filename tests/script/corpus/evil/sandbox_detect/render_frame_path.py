# expect: static call
# frame_path() reveals the render output directory (a method outside the allowlist)
import bpy
if 'tmp' in bpy.context.scene.render.frame_path():
    bpy.ops.object.delete()
