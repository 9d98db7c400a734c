# expect: static operator
# an operator returned from a function
import bpy
def pick():
    return bpy.ops.wm.quit_blender
pick()()
