# expect: static call
# a comprehension calling its own loop variable
import bpy
def run_all(fs):
    return [f() for f in fs]
run_all([bpy.context.scene.frame_current.bit_length])
