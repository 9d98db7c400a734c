# expect: static bpy
import bpy
bpy.app.timers.register(lambda: 1.0)
