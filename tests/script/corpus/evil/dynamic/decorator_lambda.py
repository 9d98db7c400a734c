# expect: static decorator
# any expression is a decorator since Python 3.9: it runs at definition time
import bpy
@(lambda f: bpy.app.timers.register(f))
def tick():
    return 0.1
