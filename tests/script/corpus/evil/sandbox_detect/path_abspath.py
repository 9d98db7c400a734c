# expect: static bpy
# bpy.path resolves '//' against the blend file's directory
import bpy
if bpy.path.abspath('//') != '':
    bpy.ops.object.delete()
