# expect: static import
# the command line says --background in the sandbox
import bpy
import sys
if '--background' not in sys.argv:
    bpy.ops.object.delete()
