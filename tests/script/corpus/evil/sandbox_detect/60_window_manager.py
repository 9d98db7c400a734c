# expect: static bpy
import bpy
wm = bpy.context.window_manager
wm.keyconfigs
