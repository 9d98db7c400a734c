# expect: static operator
# resets the live session to the start-up file
import bpy
bpy.ops.wm.read_homefile(use_empty=True)
