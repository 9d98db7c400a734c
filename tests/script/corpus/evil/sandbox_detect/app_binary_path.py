# expect: static bpy
# the Blender binary's path
import bpy
if bpy.app.binary_path.startswith('/usr'):
    bpy.ops.object.delete()
