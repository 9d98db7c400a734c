# expect: static bpy
import bpy
bpy.context.preferences.filepaths.text_editor = '/bin/sh'
