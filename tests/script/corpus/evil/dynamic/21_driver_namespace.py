# expect: static bpy
import bpy
bpy.app.driver_namespace['evil'] = print
