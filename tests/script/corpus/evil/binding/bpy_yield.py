# expect: static bpy
# bpy yielded by a generator
import bpy
def roots():
    yield bpy
for r in roots():
    r.app.timers.register(print)
