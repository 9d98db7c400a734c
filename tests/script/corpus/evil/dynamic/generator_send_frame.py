# expect: static attribute
# a generator that hands out its own frame
import bpy
def gen():
    yield 1
g = gen()
frame = g.gi_frame
frame.f_back.f_globals
