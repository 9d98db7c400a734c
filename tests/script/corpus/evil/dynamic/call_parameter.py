# expect: static call
# a parameter called: what runs is whatever the caller passes
import bpy
def run(fn):
    return fn()
run(bpy.context.scene.frame_current.bit_length)
