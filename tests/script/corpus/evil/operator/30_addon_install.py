# expect: static operator
import bpy
bpy.ops.preferences.addon_install(filepath='/tmp/evil_addon.py')
