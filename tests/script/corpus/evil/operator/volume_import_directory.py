# expect: static operator
# an importer in an allowed category, by directory and files
import bpy
bpy.ops.object.volume_import(directory='/etc/', files=[{'name': 'passwd'}])
