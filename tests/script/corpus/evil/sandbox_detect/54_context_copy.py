# expect: static bpy
import bpy
ctx = bpy.context.copy()
ctx['preferences'].filepaths.temporary_directory = '/'
